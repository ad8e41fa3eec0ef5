#include "analyzer/whatif/graph_regions.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

#include "apptracer/saturating.h"
#include "analyzer/whatif/scenario.h"

namespace apptracer::whatif {

namespace {

bool is_marker(const ReplayOp& op) { return op.kind == OpKind::EventRecord || op.kind == OpKind::EventWait; }

bool has(std::string_view name, std::string_view part) { return name.find(part) != std::string_view::npos; }

// Why no stream capture can hold a call, or "" when one can. Stream-ordered
// allocation (cudaMallocAsync, cudaFreeAsync) and asynchronous work can be
// captured; what makes the host wait, allocates or frees cannot.
std::string uncapturable(std::string_view name, bool synchronizes, bool blocking_copy) {
  if (synchronizes) return "a synchronization";
  if (blocking_copy) return "a copy from or to pageable memory, or a synchronous one";
  if (has(name, "Async")) return "";
  if (name.rfind("cudaMemset", 0) == 0 || name.rfind("cuMemset", 0) == 0) return "a synchronous memset";
  for (std::string_view part : {"Malloc", "Alloc", "Free", "Register", "Ipc", "cuMemCreate", "cuMemRelease",
                                "cuMemMap", "cuMemUnmap", "cuMemAddress", "cuMemImport"}) {
    if (has(name, part)) return "an allocation or free";
  }
  if (has(name, "Destroy") || has(name, "Reset")) return "a stream or device teardown";
  return "";
}

std::string_view call_name(const ReplayInput& input, const HostCall& call) {
  auto found = input.names.find(call.name_id);
  return found == input.names.end() ? std::string_view() : std::string_view(found->second);
}

bool graph_launch_call(const ReplayInput& input, int32_t call) {
  return call >= 0 && has(call_name(input, input.calls[call]), "GraphLaunch");
}

std::string microseconds(double ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f us", ns / 1000);
  return text;
}

}  // namespace

GraphCost graph_cost(const model::SystemModel& system, const std::string& file) {
  GraphCost cost;
  if (system.graph_launch) {
    cost.launch = *system.graph_launch;
    cost.measured = true;
    cost.source = "measured by apptracer links (" + file + ", GPU " + std::to_string(cost.launch.gpu) + ")";
    return cost;
  }
  cost.launch.node_ns = model::kAssumedGraphNodeNs;
  cost.launch.launch_ns = model::kAssumedGraphLaunchNs;
  cost.source = "assumed, not measured: " + file +
                " has no graph launch measurement (apptracer links measures one)";
  return cost;
}

GraphPlan plan_graphs(const ReplayInput& input, const trace::ProcessSteps* steps, const GraphOptions& options) {
  size_t calls = input.calls.size();
  GraphPlan plan;
  plan.region_of.assign(calls, -1);
  std::vector<bool> synchronizes(calls, false), blocking_copy(calls, false);
  std::vector<int64_t> nodes(calls, 0);
  for (size_t s = 0; s < input.syncs.size(); ++s) {
    if (s >= options.dropped_syncs.size() || !options.dropped_syncs[s]) synchronizes[input.syncs[s].call] = true;
  }
  for (size_t i = 0; i < input.ops.size(); ++i) {
    const ReplayOp& op = input.ops[i];
    if (op.call < 0) continue;
    if (i < options.blocking.size() && options.blocking[i]) blocking_copy[op.call] = true;
    if (!is_marker(op)) ++nodes[op.call];
  }
  bool stepped = steps && steps->has_steady_steps();
  std::vector<uint32_t> order(calls);
  for (uint32_t c = 0; c < calls; ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return input.calls[a].start_ns < input.calls[b].start_ns; });
  std::vector<size_t> step_of_region;
  int32_t open = -1;
  for (uint32_t c : order) {
    const HostCall& call = input.calls[c];
    std::optional<size_t> step = stepped ? steps->steady_step_at(call.start_ns) : 0;
    if (!step) {
      open = -1;
      continue;
    }
    std::string_view name = call_name(input, call);
    std::string why = uncapturable(name, synchronizes[c], blocking_copy[c]);
    if (!why.empty()) {
      ++plan.bounds[std::string(name.empty() ? "a call" : name) + " (" + why + ")"];
      open = -1;
      continue;
    }
    if (open < 0 || step_of_region[open] != *step) {
      open = static_cast<int32_t>(plan.regions.size());
      plan.regions.push_back({stepped ? steps->steps[*step].number : 0, c, 0, 0});
      step_of_region.push_back(*step);
    }
    plan.region_of[c] = open;
    ++plan.regions[open].calls;
    plan.regions[open].nodes += nodes[c];
  }
  // A region that runs nothing on the GPU (a call that only queries) stays as recorded.
  std::vector<int32_t> renumbered(plan.regions.size(), -1);
  std::vector<GraphRegion> kept;
  std::set<size_t> steps_kept;
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    if (plan.regions[r].nodes == 0) continue;
    renumbered[r] = static_cast<int32_t>(kept.size());
    kept.push_back(plan.regions[r]);
    steps_kept.insert(step_of_region[r]);
  }
  for (int32_t& region : plan.region_of) {
    if (region >= 0) region = renumbered[region];
  }
  plan.regions = std::move(kept);
  plan.steps = static_cast<int64_t>(steps_kept.size());
  if (stepped) {
    size_t steady = steps->steps.size() - steps->first_steady();
    plan.scope = std::to_string(steady) + " steady step" + (steady == 1 ? "" : "s") + " (steps from " +
                 steps->how_found() + ")";
  } else {
    plan.scope = "the whole run (the trace has no steps)";
  }
  return plan;
}

void wake_captured_calls(const GraphPlan& plan, ReplayInput& input) {
  for (uint32_t c = 0; c < input.calls.size(); ++c) {
    int32_t region = plan.region_of[c];
    if (region < 0) continue;
    uint32_t launch = plan.regions[region].launch;
    if (c != launch) input.calls[c].woken_by = static_cast<int32_t>(launch);
  }
}

void time_graph_launches(const GraphPlan& plan, const GraphCost& cost, const ReplayInput& input,
                         const Typicals& typical, NodeTiming& t) {
  std::vector<int64_t> host(plan.regions.size());
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    host[r] = saturating_round(cost.launch.launch_host_ns(plan.regions[r].nodes));
  }
  for (uint32_t c = 0; c < input.calls.size(); ++c) {
    int32_t region = plan.region_of[c];
    if (region < 0) continue;
    bool launch = plan.regions[region].launch == c;
    t.call_duration[c] = t.call_own[c] = launch ? host[region] : 0;
    t.call_tail[c] = 0;
    if (!launch) t.call_wake[c] = t.call_gap[c] = 0;
  }
  int64_t node = saturating_round(cost.launch.node_ns);
  for (size_t i = 0; i < input.ops.size(); ++i) {
    const ReplayOp& op = input.ops[i];
    if (op.call < 0 || plan.region_of[op.call] < 0) continue;
    int32_t region = plan.region_of[op.call];
    // Issued as the graph's launch returns.
    t.issue_offset[i] = plan.regions[region].launch == static_cast<uint32_t>(op.call) ? host[region] : 0;
    if (is_marker(op)) {
      t.launch[i] = t.gap[i] = t.lane_gap[i] = 0;
    } else if (!graph_launch_call(input, op.call)) {
      t.launch[i] = typical.launch_ns;
      t.gap[i] = t.lane_gap[i] = node;
    }
  }
}

void add_graph_notes(const GraphPlan& plan, const GraphCost& cost, std::vector<std::string>& notes) {
  if (plan.regions.empty()) {
    notes.push_back("--graphs: nothing in " + plan.scope + " could be captured in a graph: nothing changed");
    return;
  }
  int64_t calls = 0, nodes = 0;
  for (const GraphRegion& r : plan.regions) {
    calls = saturating_add(calls, r.calls);
    nodes = saturating_add(nodes, r.nodes);
  }
  notes.push_back("--graphs: " + plan.scope + " replayed as " + std::to_string(plan.regions.size()) +
                  " graph launch" + (plan.regions.size() == 1 ? "" : "es") + " in " + std::to_string(plan.steps) +
                  " step" + (plan.steps == 1 ? "" : "s") + ", of " + std::to_string(calls) + " calls and " +
                  std::to_string(nodes) + " nodes: the host's calls and its time between them are gone");
  if (plan.bounds.empty()) {
    notes.push_back("--graphs: no call in the steps stops a capture: one graph per step");
  } else {
    std::string list;
    for (const auto& [what, count] : plan.bounds) {
      list += (list.empty() ? "" : ", ") + std::to_string(count) + " x " + what;
    }
    notes.push_back("--graphs: regions end at the calls no capture can hold, kept as recorded: " + list);
  }
  notes.push_back("--graphs: a node starts " + microseconds(cost.launch.node_ns) +
                  " after the work it follows, a launch takes the host " + microseconds(cost.launch.launch_ns) +
                  " + " + microseconds(cost.launch.launch_ns_per_node) + " per node: " + cost.source);
}

}  // namespace apptracer::whatif
