#include "buffer/string_table.h"

#include <new>

#include "base/inside_tracer.h"

namespace apptracer {

uint32_t StringTable::intern(std::string_view text) {
  // Allocates under the lock the writer takes: never a tracked block (one
  // could wait for the writer at the memory cap).
  InsideTracer inside;
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, added] = ids_.try_emplace(std::string(text), static_cast<uint32_t>(ids_.size() + 1));
  if (added) {
    unwritten_.emplace_back(it->second, it->first);
    texts_.push_back(&it->first);
  }
  return it->second;
}

std::string StringTable::text(uint32_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  return id >= 1 && id <= texts_.size() ? *texts_[id - 1] : std::string();
}

std::vector<std::pair<uint32_t, std::string>> StringTable::take_new() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(unwritten_, {});
}

void StringTable::reset_after_fork() {
  new (&mutex_) std::mutex;
  // Ids stay valid (caches keep them); the child's new trace needs every text.
  unwritten_.clear();
  for (const auto& [text, id] : ids_) unwritten_.emplace_back(id, text);
}

StringTable& strings() {
  // Never destroyed: callbacks may still intern while static destructors run.
  static StringTable* table = new StringTable;
  return *table;
}

}  // namespace apptracer
