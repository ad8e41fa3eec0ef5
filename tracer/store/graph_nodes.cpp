#include "store/graph_nodes.h"

#include <algorithm>

namespace apptracer {

bool GraphNodes::add(const GraphNodeRecord& record) {
  auto [it, inserted] = nodes_.try_emplace(record.node_id);
  Node& node = it->second;
  if (record.event == GraphNodeEvent::Cloned) {
    node.template_node_id = record.template_node_id;
    return inserted;
  }
  if (record.has_params) node.versions.push_back(Params{record, {}, false});
  return inserted;
}

void GraphNodes::add_words(uint64_t node_id, const KernelArgsRecord& words) {
  auto it = nodes_.find(node_id);
  if (it == nodes_.end() || it->second.versions.empty()) return;
  Params& params = it->second.versions.back();
  int count = std::min<int>(words.count, KernelArgsRecord::kWords);
  params.words.insert(params.words.end(), words.words, words.words + count);
  if (words.last) params.words_complete = true;
}

const GraphNodes::Params* GraphNodes::own_parameters(const Node& node, uint64_t ns) const {
  const Params* chosen = nullptr;
  for (const Params& version : node.versions) {
    if (version.record.ns <= ns) chosen = &version;
  }
  return chosen;
}

const GraphNodes::Params* GraphNodes::parameters_of(uint64_t node_id, uint64_t ns) const {
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return nullptr;
  const Node& node = it->second;
  if (const Params* own = own_parameters(node, ns)) return own;
  auto original = nodes_.find(node.template_node_id);
  const Node* from = original == nodes_.end() ? nullptr : &original->second;
  if (from) {
    if (const Params* copied = own_parameters(*from, ns)) return copied;
  }
  // Set only after `ns` (clocks disagree): the earliest known.
  if (!node.versions.empty()) return &node.versions.front();
  return from && !from->versions.empty() ? &from->versions.front() : nullptr;
}

void GraphNodes::add_launch(uint32_t correlation_id, uint64_t start_ns) {
  auto [it, inserted] = launch_starts_.try_emplace(correlation_id, start_ns);
  // A runtime launch and the driver launch inside it share the id: the outer one started first.
  if (!inserted) {
    it->second = std::min(it->second, start_ns);
    return;
  }
  launch_order_.push_back(correlation_id);
  if (launch_order_.size() > kMaxLaunches) {
    launch_starts_.erase(launch_order_.front());
    launch_order_.pop_front();
  }
}

std::optional<uint64_t> GraphNodes::launch_start(uint32_t correlation_id) const {
  auto it = launch_starts_.find(correlation_id);
  if (it == launch_starts_.end()) return std::nullopt;
  return it->second;
}

}  // namespace apptracer
