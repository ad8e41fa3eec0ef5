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

// Each stretch's `part` shared evenly among the calls `shares` admits that
// start in it; per call. Empty where there are no stretches.
template <typename Shares>
std::vector<int64_t> shared_among_calls(const ReplayInput& input,
                                        const std::vector<trace::TracerTime::Stretch>& stretches,
                                        int64_t trace::TracerTime::Stretch::*part, Shares shares) {
  std::vector<int64_t> per_call;
  if (stretches.empty()) return per_call;
  // Each eligible call's stretch, and how many calls each stretch shares among.
  std::vector<int64_t> stretch_of(input.calls.size(), -1);
  std::vector<int64_t> sharing(stretches.size(), 0);
  for (size_t c = 0; c < input.calls.size(); ++c) {
    const HostCall& call = input.calls[c];
    if (!shares(call)) continue;
    auto s = std::upper_bound(stretches.begin(), stretches.end(), call.start_ns,
                              [](int64_t ns, const trace::TracerTime::Stretch& stretch) { return ns < stretch.end_ns; });
    if (s == stretches.end() || call.start_ns < s->start_ns) continue;
    stretch_of[c] = s - stretches.begin();
    ++sharing[stretch_of[c]];
  }
  per_call.assign(input.calls.size(), 0);
  for (size_t c = 0; c < input.calls.size(); ++c) {
    if (stretch_of[c] >= 0) per_call[c] = stretches[stretch_of[c]].*part / sharing[stretch_of[c]];
  }
  return per_call;
}

}  // namespace

std::vector<int64_t> tracer_time_before_calls(const ReplayInput& input,
                                              const std::vector<trace::TracerTime::Stretch>& stretches) {
  return shared_among_calls(input, stretches, &trace::TracerTime::Stretch::between_ns,
                            [](const HostCall& call) { return call.previous >= 0 && call.woken_by < 0; });
}

std::vector<int64_t> tracer_time_in_calls(const ReplayInput& input,
                                          const std::vector<trace::TracerTime::Stretch>& stretches) {
  return shared_among_calls(input, stretches, &trace::TracerTime::Stretch::in_calls_ns,
                            [](const HostCall&) { return true; });
}

UntracedCalls remove_tracing_cost(const ReplayInput& input, const TracingAdded& cost, NodeTiming& t) {
  std::vector<int64_t> kernels(input.calls.size(), 0);  // per call: the kernels it launched
  for (const ReplayOp& op : input.ops) {
    if (op.kind == OpKind::Kernel && op.call >= 0) ++kernels[op.call];
  }
  UntracedCalls shortened;
  for (uint32_t c = 0; c < input.calls.size(); ++c) {
    if (c < cost.before_calls.size()) {
      int64_t hooks = std::min(cost.before_calls[c], t.call_gap[c]);
      t.call_gap[c] -= hooks;
      shortened.before_calls_ns += hooks;
    }
    if (c < cost.in_calls.size()) {
      int64_t from_call = std::min(cost.in_calls[c], t.call_duration[c]);
      t.call_duration[c] -= from_call;
      t.call_own[c] = std::max<int64_t>(0, t.call_own[c] - from_call);
      int64_t from_gap = std::min(cost.in_calls[c] - from_call, t.call_gap[c]);
      t.call_gap[c] -= from_gap;
      shortened.in_calls_ns += from_call + from_gap;
    }
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
