// The ids of texts a thread interns again and again (NVTX messages, aten op
// names): the string table's lock is taken once per distinct text and
// thread, not per call.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "buffer/string_table.h"

namespace apptracer {

class InternedTextCache {
 public:
  uint32_t id(StringTable& table, std::string_view text) {
    auto hit = ids_.find(text);
    if (hit != ids_.end()) return hit->second;
    const std::string& owned = texts_.emplace_back(text);
    uint32_t id = table.intern(owned);
    ids_.emplace(owned, id);
    return id;
  }

 private:
  std::unordered_map<std::string_view, uint32_t> ids_;
  std::deque<std::string> texts_;  // owns the keys
};

}  // namespace apptracer
