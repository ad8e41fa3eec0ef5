#include "analyzer/whatif/critical_path.h"

#include <algorithm>
#include <map>

#include "apptracer/saturating.h"

namespace apptracer::whatif {

namespace {

// The table a replayed op's row is in.
const char* table_of(OpKind kind) {
  switch (kind) {
    case OpKind::Kernel: return "kernels";
    case OpKind::Copy:
    case OpKind::Prefetch: return "memcpys";
    case OpKind::Memset: return "memsets";
    case OpKind::EventRecord:
    case OpKind::EventWait: return "stream_events";
    default: return "?";  // no replayed op is of the DVDG's other kinds
  }
}

std::string name_of(const ReplayInput& input, int64_t id) {
  auto found = input.names.find(id);
  return found == input.names.end() ? "" : found->second;
}

}  // namespace

CriticalPath critical_path(const ReplayInput& input, const ReplayGraph& graph, const Timeline& timeline,
                           const std::vector<std::string>& copy_names) {
  CriticalPath path;
  uint32_t node = timeline.last_node;
  // A call reached through an op it issued counts only up to that issue.
  std::optional<int64_t> until;
  std::vector<std::pair<PathStep, uint32_t>> reversed;  // step, and the node it came from
  size_t limit = 2 * (graph.calls + graph.ops) + 2;
  while (reversed.size() < limit) {
    PathStep step;
    Dependency next{0, DepReason::None};
    if (graph.is_call(node)) {
      const HostCall& call = input.calls[node];
      step.kind = "call";
      step.source_table = "api_calls";
      step.source_id = call.row_id;
      step.name = name_of(input, call.name_id);
      step.start_ns = timeline.start[node];
      step.end_ns = until ? *until : timeline.end[node];
      next = until ? timeline.call_start_bound_by[node] : timeline.bound_by[node];
    } else {
      uint32_t op = node - graph.calls;
      const ReplayOp& record = input.ops[op];
      step.kind = std::string(trace::to_string(record.kind));
      step.source_table = table_of(record.kind);
      step.source_id = record.source_id;
      step.name = record.kind == OpKind::Kernel ? name_of(input, record.name_id)
                                                : (op < copy_names.size() ? copy_names[op] : "");
      step.device = record.device;
      step.stream = record.stream;
      step.start_ns = timeline.start[node];
      step.end_ns = timeline.end[node];
      next = timeline.bound_by[node];
    }
    step.bound_by = next.reason;
    reversed.emplace_back(step, node);
    if (next.reason == DepReason::None) break;
    until.reset();
    if (next.reason == DepReason::Issue) until = timeline.issue[node - graph.calls];
    node = next.node;
  }
  std::reverse(reversed.begin(), reversed.end());
  int64_t previous_end = timeline.first_ns;
  std::map<std::string, CriticalPath::Share> shares;
  for (auto& [step, from] : reversed) {
    int64_t contribution = elapsed_ns(previous_end, step.end_ns);
    step.wait_ns = std::min(elapsed_ns(previous_end, step.start_ns), contribution);
    step.own_ns = contribution - step.wait_ns;
    previous_end = std::max(previous_end, step.end_ns);
    CriticalPath::Share& share = shares[step.kind];
    share.kind = step.kind;
    share.own_ns = saturating_add(share.own_ns, step.own_ns);
    share.wait_ns = saturating_add(share.wait_ns, step.wait_ns);
    ++share.steps;
    path.steps.push_back(step);
  }
  for (auto& [kind, share] : shares) path.by_kind.push_back(share);
  std::sort(path.by_kind.begin(), path.by_kind.end(), [](const auto& a, const auto& b) {
    return saturating_add(a.own_ns, a.wait_ns) > saturating_add(b.own_ns, b.wait_ns);
  });
  return path;
}

}  // namespace apptracer::whatif
