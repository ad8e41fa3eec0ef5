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

int64_t remove_tracing_cost(const ReplayInput& input, int64_t per_launch_ns, NodeTiming& t) {
  std::vector<bool> launches(input.calls.size(), false);
  for (const ReplayOp& op : input.ops) {
    if (op.kind == OpKind::Kernel && op.call >= 0) launches[op.call] = true;
  }
  int64_t shortened = 0;
  for (uint32_t c = 0; c < input.calls.size(); ++c) {
    if (!launches[c] || launches_a_graph(input, input.calls[c])) continue;
    int64_t left = per_launch_ns;
    int64_t from_gap = std::min(left, t.call_gap[c]);
    t.call_gap[c] -= from_gap;
    left -= from_gap;
    int64_t from_call = std::min(left, t.call_duration[c]);
    t.call_duration[c] -= from_call;
    t.call_own[c] = std::max<int64_t>(0, t.call_own[c] - from_call);
    ++shortened;
  }
  for (size_t i = 0; i < input.ops.size(); ++i) {
    int32_t call = input.ops[i].call;
    if (call >= 0 && launches[call]) t.issue_offset[i] = std::min(t.issue_offset[i], t.call_duration[call]);
  }
  return shortened;
}

}  // namespace apptracer::whatif
