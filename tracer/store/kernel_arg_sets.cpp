#include "store/kernel_arg_sets.h"

#include <cstring>

namespace apptracer {

namespace {

constexpr size_t kMaxKnownBytes = 64u << 20;

void put(std::string& key, int64_t value) {
  char bytes[sizeof value];
  std::memcpy(bytes, &value, sizeof value);
  key.append(bytes, sizeof value);
}

std::string key_of(const std::vector<KernelArgWordRow>& words) {
  std::string key;
  key.reserve(words.size() * 7 * sizeof(int64_t));
  for (const KernelArgWordRow& w : words) {
    put(key, w.param_index.value_or(-1));
    put(key, (w.offset << 16) | w.size);
    put(key, w.raw_value.value_or(0));
    put(key, w.alloc_id.value_or(-1));
    put(key, w.alloc_offset.value_or(-1));
    put(key, (static_cast<int64_t>(w.access) << 8) | static_cast<int64_t>(w.access_source));
  }
  return key;
}

}  // namespace

KernelArgSets::KernelArgSets(Database& db) : sets_(db), words_(db) {}

int64_t KernelArgSets::id_of(const std::vector<KernelArgWordRow>& words) {
  std::string key = key_of(words);
  auto known = known_.find(key);
  if (known != known_.end()) return known->second;
  KernelArgSetRow set;
  set.words = static_cast<int64_t>(words.size());
  int64_t id = sets_.insert(set);
  for (KernelArgWordRow word : words) {
    word.arg_set_id = id;
    words_.insert(word);
  }
  if (known_bytes_ + key.size() > kMaxKnownBytes) {
    known_.clear();
    known_bytes_ = 0;
  }
  known_bytes_ += key.size() + 64;
  known_.emplace(std::move(key), id);
  return id;
}

}  // namespace apptracer
