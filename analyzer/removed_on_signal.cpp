#include "analyzer/removed_on_signal.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace apptracer {

namespace {

// One registered file. A handler reads `path` only while `active`; the
// files a command writes at once are few (dvdg: five exports).
struct Slot {
  std::atomic<bool> claimed{false};
  std::atomic<bool> active{false};
  char path[PATH_MAX] = {};
};
constexpr size_t kSlots = 32;
Slot slots[kSlots];
static_assert(std::atomic<bool>::is_always_lock_free, "the handler reads the flags");

constexpr int kUserSignals[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};

// Async-signal-safe: unlink, signal and raise only.
void remove_and_end(int signal_number) {
  for (Slot& slot : slots) {
    if (slot.active.load(std::memory_order_acquire)) unlink(slot.path);
  }
  signal(signal_number, SIG_DFL);
  raise(signal_number);  // delivered, with its default action, when the handler returns
}

void install_handlers() {
  for (int signal_number : kUserSignals) {
    struct sigaction current {};
    if (sigaction(signal_number, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
    struct sigaction action {};
    action.sa_handler = remove_and_end;
    sigemptyset(&action.sa_mask);
    for (int other : kUserSignals) sigaddset(&action.sa_mask, other);
    sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace

std::string create_removed_on_signal(const std::string& pattern) {
  static std::once_flag installed;
  std::call_once(installed, install_handlers);
  for (Slot& slot : slots) {
    bool expected = false;
    if (pattern.size() >= sizeof slot.path ||
        !slot.claimed.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      continue;
    }
    std::memcpy(slot.path, pattern.c_str(), pattern.size() + 1);
    int fd = mkstemp(slot.path);
    if (fd < 0) {
      int error = errno;
      slot.claimed.store(false, std::memory_order_release);
      errno = error;
      return "";
    }
    slot.active.store(true, std::memory_order_release);
    close(fd);
    return slot.path;
  }
  // Every slot taken, or a path longer than any: made, but not removed on a signal.
  std::string name = pattern;
  int fd = mkstemp(name.data());
  if (fd < 0) return "";
  close(fd);
  return name;
}

void keep_on_signal(const std::string& path) {
  for (Slot& slot : slots) {
    if (slot.active.load(std::memory_order_acquire) && path == slot.path) {
      slot.active.store(false, std::memory_order_release);
      slot.claimed.store(false, std::memory_order_release);
      return;
    }
  }
}

}  // namespace apptracer
