// kernels rows: a launch's call (its launch values, its function's names),
// its parameter words as an argument set (kernel_arg_sets), and its GPU
// activity, joined by correlation id in whichever order they come. Work a
// graph launch ran gets its node's parameters, resolved at the launch.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "apptracer/records.h"
#include "store/activity_join.h"
#include "store/address_resolver.h"
#include "store/graph_nodes.h"
#include "store/joined_rows.h"
#include "store/kernel_arg_sets.h"
#include "store/kernel_signatures.h"

namespace apptracer {

struct KernelTraits;

class KernelRows {
 public:
  KernelRows(Database& db, AddressResolver& resolver, KernelSignatures& signatures,
             const GraphNodes& graph_nodes, ActivityWait wait);
  ~KernelRows();

  void write_launch(const Record& r);
  // A KernelArgs record of a launch (graph nodes' words go to GraphNodes).
  void write_args(const Record& r);
  void write_activity(const Record& r);

  void end_pass(uint64_t pass_ns);
  void flush() {
    inserters_.batch.flush();
    arg_sets_.flush();
  }
  bool waiting() const;
  // Rows stored again when what they waited for came late (ActivityJoin).
  uint64_t stored_again() const;
  // Stores every row still waiting, launches whose words never came as they are.
  void store_waiting();
  // Whether the process's kernels can touch pageable host memory (HMM, ATS):
  // where they cannot, a word pointing there (stale entries of a metadata
  // struct, a host scalar's address) is no access and makes no host row.
  void set_kernels_read_pageable(bool read) { kernels_read_pageable_ = read; }

 private:
  // A parameter word resolved at `ns`, with the access the kernel's signature
  // gives it; nullopt for a word the signature says is no pointer.
  std::optional<KernelArgWordRow> argument_row(uint32_t name_id, const KernelArgWord& word,
                                               uint64_t ns);
  // Work a graph launch ran (activity only): its node's parameters.
  void fill_from_graph_node(KernelRow& row);

  AddressResolver& resolver_;
  KernelSignatures& signatures_;
  const GraphNodes& graph_nodes_;
  KernelArgSets arg_sets_;
  JoinedRowInserters<KernelRow> inserters_;
  std::unique_ptr<ActivityJoin<KernelRow, KernelTraits>> join_;

  // A launch's parameter words, gathered from the records that follow it on
  // its thread (a thread's records reach the writer in order). One per
  // thread, reused: no allocation per launch.
  struct LaunchArgs {
    uint32_t own_correlation_id = 0;  // 0: no launch awaiting its words
    uint32_t outer_correlation_id = 0;
    uint32_t name_id = 0;
    uint64_t api_start_ns = 0;
    std::vector<KernelArgWordRow> words;
  };
  std::unordered_map<uint32_t, LaunchArgs> launch_args_;  // by thread id
  bool kernels_read_pageable_ = true;
};

}  // namespace apptracer
