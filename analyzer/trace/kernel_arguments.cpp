#include "analyzer/trace/kernel_arguments.h"

#include <algorithm>
#include <stdexcept>

#include "analyzer/trace/trace.h"

namespace apptracer::trace {

namespace {

KernelWord word_of(NullableInt alloc_id, NullableInt alloc_offset, int64_t offset,
                   AccessKind access, AccessSource source) {
  return {alloc_id, alloc_offset.value_or(0), static_cast<uint32_t>(offset), access, source};
}

KernelWord word_of(const Packed<KernelArgWordRow>& row) {
  return word_of(row.alloc_id, row.alloc_offset, row.offset, row.access, row.access_source);
}

// Schema 2's kernel_args table, a shape that no longer changes: a launch's
// words by its id.
constexpr const char* kWordsPerLaunch =
    "SELECT kernel_id, alloc_id, alloc_offset, offset, access, access_source FROM kernel_args";

KernelWord word_per_launch(const Statement& rows) {
  return word_of(rows.optional_int64(1), rows.optional_int64(2), rows.int64(3),
                 static_cast<AccessKind>(rows.int64(4)), static_cast<AccessSource>(rows.int64(5)));
}

}  // namespace

bool has_words_per_launch(Database& db) {
  return db.has_table("kernel_args") && !db.has_table(KernelArgWordRow::kTable);
}

KernelArguments::KernelArguments(Trace& trace) {
  Database& db = trace.db();
  std::vector<int64_t> set_of_word;  // parallel to words_ until the sets are indexed
  auto add = [&](int64_t set, const KernelWord& word) {
    if (words_.size() >= UINT32_MAX) throw std::length_error("more kernel argument words than the analyzer holds");
    set_of_word.push_back(set);
    words_.push_back(word);
  };
  sets_per_launch_ = has_words_per_launch(db);
  if (sets_per_launch_) {
    Statement rows = db.prepare(kWordsPerLaunch);
    while (rows.step()) add(rows.int64(0), word_per_launch(rows));
  } else if (db.has_table(KernelArgWordRow::kTable)) {
    size_t expected = detail::expected_rows(db, table_of<KernelArgWordRow>());
    words_.reserve(expected);
    set_of_word.reserve(expected);
    trace.stream<KernelArgWordRow>("", [&](const Packed<KernelArgWordRow>& row) {
      add(row.arg_set_id, word_of(row));
    });
  }
  // A set's words are written together, in order: sorting them is the exception.
  auto key = [&](size_t i) { return std::make_pair(set_of_word[i], words_[i].offset); };
  bool sorted = true;
  for (size_t i = 1; i < words_.size() && sorted; ++i) sorted = key(i - 1) <= key(i);
  if (!sorted) {
    std::vector<uint32_t> order(words_.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
    std::vector<KernelWord> words(words_.size());
    std::vector<int64_t> sets(words_.size());
    for (size_t i = 0; i < order.size(); ++i) {
      words[i] = words_[order[i]];
      sets[i] = set_of_word[order[i]];
    }
    words_.swap(words);
    set_of_word.swap(sets);
  }
  for (size_t i = 0; i < words_.size(); ++i) {
    if (sets_.empty() || sets_.back().first != set_of_word[i])
      sets_.emplace_back(set_of_word[i], static_cast<uint32_t>(i));
  }
}

bool KernelArguments::captured(const Packed<KernelRow>& kernel) const {
  return sets_per_launch_ ? of(kernel).size() > 0 : kernel.arg_set_id.has_value();
}

KernelArguments::Words KernelArguments::of(const Packed<KernelRow>& kernel) const {
  NullableInt set = sets_per_launch_ ? NullableInt(kernel.id) : kernel.arg_set_id;
  return set ? of_set(*set) : Words{};
}

KernelArguments::Words KernelArguments::of_set(int64_t set) const {
  auto found = std::lower_bound(sets_.begin(), sets_.end(), std::make_pair(set, uint32_t{0}));
  if (found == sets_.end() || found->first != set) return {};
  uint32_t last = std::next(found) == sets_.end() ? static_cast<uint32_t>(words_.size())
                                                  : std::next(found)->second;
  return {words_.data() + found->second, words_.data() + last};
}

KernelWordLookup::KernelWordLookup(Trace& trace) {
  Database& db = trace.db();
  if (has_words_per_launch(db)) {
    launch_words_ = db.prepare(std::string(kWordsPerLaunch) + " WHERE kernel_id = ? ORDER BY offset");
  } else {
    // Ordered here, not by SQLite: ORDER BY offset made it build and sort a
    // temporary b-tree for every set, most of a timeline's reading.
    set_words_ = trace.cursor<KernelArgWordRow>("WHERE arg_set_id = ?");
  }
}

const std::vector<KernelWord>& KernelWordLookup::of(const Packed<KernelRow>& kernel) {
  if (set_words_) {
    static const std::vector<KernelWord> kNone;
    if (!kernel.arg_set_id) return kNone;
    auto kept = kept_.find(*kernel.arg_set_id);
    if (kept != kept_.end()) return kept->second;
    if (kept_.size() >= kKeptSets) kept_.clear();
    std::vector<KernelWord>& words = kept_[*kernel.arg_set_id];
    Statement& query = set_words_->statement();
    query.reset();
    query.bind(1, *kernel.arg_set_id);
    Packed<KernelArgWordRow> row;
    while (set_words_->next(row)) words.push_back(word_of(row));
    std::stable_sort(words.begin(), words.end(),
                     [](const KernelWord& a, const KernelWord& b) { return a.offset < b.offset; });
    return words;
  }
  launch_.clear();
  if (launch_words_) {
    launch_words_->reset();
    launch_words_->bind(1, kernel.id);
    while (launch_words_->step()) launch_.push_back(word_per_launch(*launch_words_));
  }
  return launch_;
}

}  // namespace apptracer::trace
