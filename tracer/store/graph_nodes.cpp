#include "store/graph_nodes.h"

#include <algorithm>

namespace apptracer {

bool GraphNodes::add(const GraphNodeRecord& record) {
  auto [it, inserted] = nodes_.try_emplace(record.node_id);
  Node& node = it->second;
  if (record.event == GraphNodeEvent::Cloned) {
    node.template_node_id = record.template_node_id;
    if (inserted) node.record = record;
    return inserted;
  }
  node.record = record;
  node.words.clear();
  node.words_complete = false;
  return inserted;
}

void GraphNodes::add_words(uint64_t node_id, const KernelArgsRecord& words) {
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return;
  Node& node = it->second;
  int count = std::min<int>(words.count, KernelArgsRecord::kWords);
  node.words.insert(node.words.end(), words.words, words.words + count);
  if (words.last) node.words_complete = true;
}

const GraphNodes::Node* GraphNodes::parameters_of(uint64_t node_id) const {
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return nullptr;
  if (it->second.record.has_params || !it->second.template_node_id) return &it->second;
  auto original = nodes_.find(it->second.template_node_id);
  return original == nodes_.end() ? &it->second : &original->second;
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
