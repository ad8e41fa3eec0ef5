// A line of text composed inside a signal handler: appends only, into the
// caller's buffer, always terminated; no formatting library (none is
// async-signal-safe). The caller writes it with write(2).
#pragma once

#include <cstddef>
#include <cstdint>

namespace apptracer {

struct SignalLine {
  char* out;
  size_t capacity;
  size_t length = 0;

  void text(const char* s) {
    for (; *s && length + 1 < capacity; ++s) out[length++] = *s;
    out[length] = '\0';
  }
  void hex(uintptr_t value) {
    text("0x");
    digits(value, 16);
  }
  void decimal(uint64_t value) { digits(value, 10); }

 private:
  void digits(uint64_t value, unsigned base) {
    char reversed[2 * sizeof value + 4];
    int n = 0;
    do {
      reversed[n++] = "0123456789abcdef"[value % base];
      value /= base;
    } while (value);
    while (n > 0 && length + 1 < capacity) out[length++] = reversed[--n];
    out[length] = '\0';
  }
};

}  // namespace apptracer
