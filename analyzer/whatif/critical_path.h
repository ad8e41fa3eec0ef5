// The critical path of a replay: starting from the node that ends last,
// each step goes to what held it (timeline.h's bound_by) until the start of
// the trace. Shortening anything off this chain does not shorten the run;
// it is where time could be saved.
//
// Each step's `own_ns` is its duration, `wait_ns` the time between what
// held it and its start (launch latency, the gap between operations, the
// host time before a call). Steps add up to the predicted total.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/whatif/replay_graph.h"
#include "analyzer/whatif/replay_input.h"
#include "analyzer/whatif/replay_timeline.h"

namespace apptracer::whatif {

struct PathStep {
  std::string kind;          // kernel, copy, memset, prefetch, event record, event wait, call
  std::string source_table;  // kernels, memcpys, memsets, stream_events, api_calls
  int64_t source_id = 0;     // its row in source_table
  std::string name;          // kernel or call name, copy path
  std::optional<int64_t> device;
  std::optional<int64_t> stream;
  int64_t start_ns = 0;  // predicted, on the trace's clock
  int64_t end_ns = 0;
  int64_t wait_ns = 0;
  int64_t own_ns = 0;
  DepReason bound_by = DepReason::None;  // what held its start
};

struct CriticalPath {
  std::vector<PathStep> steps;  // first to last
  // Time on the path by kind of step, wait and own time separately.
  struct Share {
    std::string kind;
    int64_t own_ns = 0;
    int64_t wait_ns = 0;
    int64_t steps = 0;
  };
  std::vector<Share> by_kind;
};

// `copy_names`: per op, the path name to show for copies (may be empty).
CriticalPath critical_path(const ReplayInput& input, const ReplayGraph& graph, const Timeline& timeline,
                           const std::vector<std::string>& copy_names);

}  // namespace apptracer::whatif
