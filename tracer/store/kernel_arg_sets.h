// Kernel arguments stored once per distinct set: a training loop launches the
// same kernels on the same buffers step after step, and storing each
// launch's words again was most of a trace's size (kernel_arg_sets,
// kernel_arg_words; the kernel_args view joins them back per launch).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "apptracer/row_inserter.h"

namespace apptracer {

class KernelArgSets {
 public:
  explicit KernelArgSets(Database& db);

  // The id of the set of these resolved words (arg_set_id left unset),
  // stored (batched: see flush) if no launch had it before.
  int64_t id_of(const std::vector<KernelArgWordRow>& words);
  // Stores the new sets still waiting in their batches (before a commit).
  void flush();

 private:
  BatchInserter<KernelArgSetRow> sets_;
  BatchInserter<KernelArgWordRow> words_;
  int64_t next_id_ = 1;
  // Known sets by a hash of their words (collisions compared word by word).
  // Bounded: past the cap it starts over (sets are then stored again; ids
  // stay right).
  struct Known {
    int64_t id;
    std::vector<KernelArgWordRow> words;
  };
  std::unordered_multimap<uint64_t, Known> known_;
  size_t known_words_ = 0;
};

}  // namespace apptracer
