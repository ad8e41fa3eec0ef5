#include "store/kernel_arg_sets.h"

namespace apptracer {

namespace {

constexpr size_t kMaxKnownWords = 1u << 20;

uint64_t mix(uint64_t hash, int64_t value) {
  hash ^= static_cast<uint64_t>(value) + 0x9e3779b97f4a7c15ull + (hash << 6) + (hash >> 2);
  return hash;
}

uint64_t hash_of(const std::vector<KernelArgWordRow>& words) {
  uint64_t hash = words.size();
  for (const KernelArgWordRow& w : words) {
    hash = mix(hash, w.param_index.value_or(-1));
    hash = mix(hash, (w.offset << 16) ^ w.size);
    hash = mix(hash, w.raw_value.value_or(0));
    hash = mix(hash, w.alloc_id.value_or(-1));
    hash = mix(hash, w.alloc_offset.value_or(-1));
    hash = mix(hash, (static_cast<int64_t>(w.access) << 8) | static_cast<int64_t>(w.access_source));
  }
  return hash;
}

bool same_word(const KernelArgWordRow& a, const KernelArgWordRow& b) {
  return a.param_index == b.param_index && a.offset == b.offset && a.size == b.size &&
         a.raw_value == b.raw_value && a.alloc_id == b.alloc_id &&
         a.alloc_offset == b.alloc_offset && a.access == b.access &&
         a.access_source == b.access_source;
}

bool same_words(const std::vector<KernelArgWordRow>& a, const std::vector<KernelArgWordRow>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same_word(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace

KernelArgSets::KernelArgSets(Database& db) : sets_(db), words_(db) {}

int64_t KernelArgSets::id_of(const std::vector<KernelArgWordRow>& words) {
  uint64_t hash = hash_of(words);
  auto [first, last] = known_.equal_range(hash);
  for (auto it = first; it != last; ++it) {
    if (same_words(it->second.words, words)) return it->second.id;
  }
  // Ids of our own, so that the rows can wait in a batch.
  int64_t id = next_id_++;
  KernelArgSetRow set;
  set.id = id;
  set.words = static_cast<int64_t>(words.size());
  sets_.add(set);
  for (KernelArgWordRow word : words) {
    word.arg_set_id = id;
    words_.add(word);
  }
  if (known_words_ + words.size() + 1 > kMaxKnownWords) {
    known_.clear();
    known_words_ = 0;
  }
  known_words_ += words.size() + 1;
  known_.emplace(hash, Known{id, words});
  return id;
}

void KernelArgSets::flush() {
  sets_.flush();
  words_.flush();
}

}  // namespace apptracer
