// What each kernel launch's parameter words point into: the words of its
// argument set (kernel_arg_words), which launches with the same words share.
// The words are streamed once into a compact form and held once per set,
// never once per launch: a long training run has millions of launches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <unordered_map>
#include <vector>

#include "analyzer/trace/packed_rows.h"
#include "analyzer/trace/table_reader.h"

namespace apptracer::trace {

class Trace;

// A parameter word of a launch.
struct KernelWord {
  NullableInt alloc_id;  // the allocation it points into; NULL in traces that kept every word
  int64_t alloc_offset = 0;
  uint32_t offset = 0;  // in the parameter buffer
  AccessKind access = AccessKind::Unknown;
  AccessSource source = AccessSource::None;
};

// Whether the trace keeps each launch's words in schema 2's kernel_args
// table rather than in shared sets (kernel_arg_words).
bool has_words_per_launch(Database& db);

class KernelArguments {
 public:
  struct Words {
    const KernelWord* first = nullptr;
    const KernelWord* last = nullptr;  // one past
    const KernelWord* begin() const { return first; }
    const KernelWord* end() const { return last; }
    size_t size() const { return static_cast<size_t>(last - first); }
  };

  explicit KernelArguments(Trace& trace);

  // Whether the launch's arguments were read (it has a set, maybe without a
  // word in an allocation). Before argument sets (schema 2) a launch says so
  // by having words.
  bool captured(const Packed<KernelRow>& kernel) const;
  // The launch's words, by offset.
  Words of(const Packed<KernelRow>& kernel) const;

 private:
  Words of_set(int64_t set) const;

  // Schema 2 kept each launch's words in a kernel_args table: read as if
  // each launch had a set of its own, numbered as the launch.
  bool sets_per_launch_ = false;
  std::vector<KernelWord> words_;                     // by set, then offset
  std::vector<std::pair<int64_t, uint32_t>> sets_;  // set id -> its first word, ascending
};

// A launch's words read when asked, through their set's index: for a
// command that streams launches and must not hold every set (a trace whose
// launches share none has as many sets as launches). The sets read last are
// kept, a bounded number: a training loop's launches reuse a step's sets, so
// most launches need no query.
class KernelWordLookup {
 public:
  explicit KernelWordLookup(Trace& trace);
  // The launch's words, by offset; valid until the next call.
  const std::vector<KernelWord>& of(const Packed<KernelRow>& kernel);

 private:
  static constexpr size_t kKeptSets = 4096;
  std::optional<PackedReader<KernelArgWordRow>> set_words_;
  std::optional<Statement> launch_words_;  // schema 2
  std::unordered_map<int64_t, std::vector<KernelWord>> kept_;  // by arg_set_id
  std::vector<KernelWord> launch_;  // schema 2: the last launch's
};

}  // namespace apptracer::trace
