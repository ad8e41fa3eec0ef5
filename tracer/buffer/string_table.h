// Interned text shared by the hot path and the writer. Interning happens
// rarely (a kernel handle's first launch, an API function's first call), so a
// mutex is enough; records then carry a 32-bit id instead of a pointer whose
// lifetime we do not control.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace apptracer {

class StringTable {
 public:
  // Returns the id of `text`, adding it if new. Ids start at 1; 0 means none.
  uint32_t intern(std::string_view text);

  // The text of an id ("" for an unknown id).
  std::string text(uint32_t id);

  // Strings added since the last call, for the writer to store.
  std::vector<std::pair<uint32_t, std::string>> take_new();

  // Around fork: held by the forking thread so that the child never copies
  // the table half changed by another thread.
  void lock_for_fork() { mutex_.lock(); }
  void unlock_after_fork_in_parent() { mutex_.unlock(); }
  // In a forked child: every string is unwritten again (the child writes its own trace).
  void reset_after_fork();

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<const std::string*> texts_;  // by id - 1; map keys do not move
  std::vector<std::pair<uint32_t, std::string>> unwritten_;
};

StringTable& strings();

}  // namespace apptracer
