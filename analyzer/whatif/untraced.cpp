#include "analyzer/whatif/untraced.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace apptracer::whatif {

namespace {

bool launches_a_graph(const ReplayInput& input, const HostCall& call) {
  auto name = input.names.find(call.name_id);
  return name != input.names.end() && std::string_view(name->second).find("GraphLaunch") != std::string_view::npos;
}

}  // namespace

UntracedCalls remove_tracing_cost(const ReplayInput& input, const TracingAdded& cost, NodeTiming& t) {
  std::vector<int64_t> kernels(input.calls.size(), 0);  // per call: the kernels it launched
  for (const ReplayOp& op : input.ops) {
    if (op.kind == OpKind::Kernel && op.call >= 0) ++kernels[op.call];
  }
  UntracedCalls shortened;
  for (uint32_t c = 0; c < input.calls.size(); ++c) {
    if (kernels[c] == 0) continue;
    if (launches_a_graph(input, input.calls[c])) {
      if (!cost.graph_launch) continue;
      int64_t untraced = std::max<int64_t>(0, static_cast<int64_t>(cost.graph_launch->launch_host_ns(kernels[c])));
      if (t.call_duration[c] <= untraced) continue;
      int64_t added = t.call_duration[c] - untraced;
      t.call_duration[c] = untraced;
      t.call_own[c] = std::max<int64_t>(0, t.call_own[c] - added);
      ++shortened.graph_launches;
      continue;
    }
    if (cost.per_launch_ns <= 0) continue;
    int64_t left = cost.per_launch_ns;
    int64_t from_gap = std::min(left, t.call_gap[c]);
    t.call_gap[c] -= from_gap;
    left -= from_gap;
    int64_t from_call = std::min(left, t.call_duration[c]);
    t.call_duration[c] -= from_call;
    t.call_own[c] = std::max<int64_t>(0, t.call_own[c] - from_call);
    ++shortened.kernel_launches;
  }
  for (size_t i = 0; i < input.ops.size(); ++i) {
    int32_t call = input.ops[i].call;
    if (call >= 0 && kernels[call] > 0) t.issue_offset[i] = std::min(t.issue_offset[i], t.call_duration[call]);
  }
  return shortened;
}

}  // namespace apptracer::whatif
