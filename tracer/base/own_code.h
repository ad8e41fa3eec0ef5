// Where the tracer's own code lies in memory, so that a crash's faulting
// instruction can be told ours or the program's: a fault in our code is our
// bug, and the user should hear so rather than blame their framework.
// Found once, when the signal handlers are installed; what a handler does
// with it is arithmetic and write(2), both async-signal-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace apptracer {

struct OwnCode {
  uintptr_t base = 0;   // where the object holding it is loaded
  uintptr_t begin = 0;  // its executable segments, [begin, end)
  uintptr_t end = 0;
  char name[64] = {};   // the object's file name, without its directory

  bool contains(uintptr_t pc) const { return pc >= begin && pc < end; }
};

// The loaded object holding `symbol` (ours: libapptracer.so); empty where the
// system cannot say.
OwnCode own_code_of(const void* symbol);

// "apptracer: SIGSEGV in apptracer's own code (libapptracer.so+0xbff4c): ..."
// into `out` (always terminated); its length. Async-signal-safe.
size_t describe_own_fault(char* out, size_t capacity, int signal_number, const OwnCode& code, uintptr_t pc);

// The instruction a fault signal interrupted (0 where this architecture's
// context is not known here).
uintptr_t faulting_pc(const void* signal_context);

}  // namespace apptracer
