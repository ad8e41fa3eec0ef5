// What the writer knows of CUDA graphs, so work a graph launch ran gets its
// node's parameters: each version of a node's parameters and argument words
// (a node an instantiation copied answers with its original's when it has
// none of its own), and when each graph launch was called.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "apptracer/records.h"

namespace apptracer {

class GraphNodes {
 public:
  // A node's parameters from `record.ns` on.
  struct Params {
    GraphNodeRecord record{};
    std::vector<KernelArgWord> words;  // a kernel node's candidate pointer words
    bool words_complete = false;       // the last KernelArgs record came
  };

  // Returns true for a node not seen before (a copy's Cloned after its
  // Created, and ParamsSet, name a known node).
  bool add(const GraphNodeRecord& record);
  // The words in KernelArgs records that follow a kernel node's record.
  void add_words(uint64_t node_id, const KernelArgsRecord& words);

  // The parameters `node_id` ran with when launched at `ns`: its own latest
  // version set by then, else that of the node it was copied from (else the
  // earliest known); nullptr when neither has any.
  const Params* parameters_of(uint64_t node_id, uint64_t ns) const;

  // Graph launches, by the correlation id their work carries. The most recent
  // kMaxLaunches are kept: work reaches the writer in a later pass than its call.
  void add_launch(uint32_t correlation_id, uint64_t start_ns);
  std::optional<uint64_t> launch_start(uint32_t correlation_id) const;
  // The same for a row's call_correlation_id (none: no launch).
  std::optional<uint64_t> launch_start(const std::optional<int64_t>& correlation_id) const {
    if (!correlation_id) return std::nullopt;
    return launch_start(static_cast<uint32_t>(*correlation_id));
  }

 private:
  struct Node {
    uint64_t template_node_id = 0;
    std::vector<Params> versions;  // in the order they were set
  };
  const Params* own_parameters(const Node& node, uint64_t ns) const;

  static constexpr size_t kMaxLaunches = 1 << 18;
  std::unordered_map<uint64_t, Node> nodes_;
  std::unordered_map<uint32_t, uint64_t> launch_starts_;
  std::deque<uint32_t> launch_order_;
};

}  // namespace apptracer
