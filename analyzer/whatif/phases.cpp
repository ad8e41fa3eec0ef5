#include "analyzer/whatif/phases.h"

#include <algorithm>
#include <map>
#include <set>

#include "apptracer/saturating.h"

namespace apptracer::whatif {

namespace {

// Each thread's calls, by start, for mapping its instants.
class HostTimeMap {
 public:
  explicit HostTimeMap(const ReplayInput& input) : input_(input) {
    for (uint32_t c = 0; c < input.calls.size(); ++c) calls_[input.calls[c].tid].push_back(c);
  }

  // Where instant `ns` of thread `tid`'s recording falls in `timeline`. An
  // instant between two calls stays as far after the first as it was, but
  // never past the second's start: where a change takes the host's time
  // between calls away (--graphs), a range's ends would otherwise cross and
  // its length go below zero.
  int64_t map(int64_t tid, int64_t ns, const Timeline& timeline) const {
    auto thread = calls_.find(tid);
    if (thread == calls_.end()) return ns;
    const std::vector<uint32_t>& calls = thread->second;
    auto after = std::upper_bound(calls.begin(), calls.end(), ns,
                                  [&](int64_t t, uint32_t c) { return t < input_.calls[c].start_ns; });
    if (after == calls.begin()) return ns;
    uint32_t c = *(after - 1);
    const HostCall& call = input_.calls[c];
    if (ns <= call.end_ns) {
      return std::min(saturating_add(timeline.start[c], saturating_sub(ns, call.start_ns)), timeline.end[c]);
    }
    int64_t mapped = saturating_add(timeline.end[c], saturating_sub(ns, call.end_ns));
    return after == calls.end() ? mapped : std::min(mapped, std::max(timeline.end[c], timeline.start[*after]));
  }

 private:
  const ReplayInput& input_;
  std::map<int64_t, std::vector<uint32_t>> calls_;
};

std::vector<Phase> nvtx_phases(const ReplayInput& input, const std::vector<const Timeline*>& timelines) {
  HostTimeMap host(input);
  std::map<std::string, Phase> by_name;
  std::vector<std::string> order;
  for (const NvtxRange& range : input.ranges) {
    auto [it, inserted] = by_name.emplace(range.name, Phase{range.name, "nvtx", "", 0, {}});
    Phase& phase = it->second;
    if (inserted) {
      order.push_back(range.name);
      phase.ns.assign(timelines.size(), 0);
    }
    ++phase.count;
    for (size_t t = 0; t < timelines.size(); ++t) {
      int64_t ns = saturating_sub(host.map(range.tid, range.end_ns, *timelines[t]),
                                  host.map(range.tid, range.start_ns, *timelines[t]));
      phase.ns[t] = saturating_add(phase.ns[t], ns);
    }
  }
  std::vector<Phase> phases;
  for (const std::string& name : order) phases.push_back(by_name[name]);
  return phases;
}

// The thread that made the first call.
int64_t first_thread(const ReplayInput& input) {
  return std::min_element(input.calls.begin(), input.calls.end(),
                          [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; })
      ->tid;
}

std::vector<Phase> periods(const ReplayInput& input, const std::vector<const Timeline*>& timelines) {
  std::vector<uint32_t> boundaries;  // sync calls of the first thread, by start
  if (!input.calls.empty()) {
    int64_t tid = first_thread(input);
    std::set<uint32_t> syncs;
    for (const SyncCall& sync : input.syncs) {
      if (input.calls[sync.call].tid == tid) syncs.insert(static_cast<uint32_t>(sync.call));
    }
    boundaries.assign(syncs.begin(), syncs.end());
  }
  size_t count = boundaries.size() + 1;
  size_t groups = std::min(count, kMaxPeriods);
  std::vector<Phase> phases;
  size_t first = 0;
  for (size_t g = 0; g < groups; ++g) {
    size_t last = (g + 1) * count / groups - 1;  // periods first..last, 0-based
    Phase phase;
    phase.kind = "period";
    phase.count = static_cast<int64_t>(last - first + 1);
    phase.name = first == last ? "period " + std::to_string(first + 1)
                               : "periods " + std::to_string(first + 1) + "-" + std::to_string(last + 1);
    if (last < boundaries.size()) {
      auto name = input.names.find(input.calls[boundaries[last]].name_id);
      phase.detail = "until " + (name == input.names.end() ? std::string("a synchronization") : name->second);
    } else {
      phase.detail = "until the end";
    }
    for (const Timeline* timeline : timelines) {
      int64_t from = first == 0 ? timeline->first_ns : timeline->end[boundaries[first - 1]];
      int64_t to = last < boundaries.size() ? timeline->end[boundaries[last]] : timeline->last_ns;
      phase.ns.push_back(saturating_sub(to, from));
    }
    phases.push_back(phase);
    first = last + 1;
  }
  return phases;
}

}  // namespace

std::vector<Phase> steps_phase(const ReplayInput& input, const trace::ProcessSteps* steps,
                               const std::vector<const Timeline*>& timelines) {
  if (!steps || input.calls.empty() || steps->first_steady() >= steps->steps.size()) return {};
  HostTimeMap host(input);
  int64_t tid = first_thread(input);
  const trace::Step& first = steps->steps[steps->first_steady()];
  const trace::Step& last = steps->steps.back();
  Phase phase{"steady steps", "steps", steps->how_found(),
              static_cast<int64_t>(steps->steps.size() - steps->first_steady()), {}};
  auto calls = static_cast<uint32_t>(input.calls.size());
  std::vector<uint32_t> in_steps;
  std::set<std::pair<NullableInt, NullableInt>> step_streams;
  for (uint32_t i = 0; i < input.ops.size(); ++i) {
    const ReplayOp& op = input.ops[i];
    if (op.issue_ns < first.start_ns || op.issue_ns >= last.end_ns) continue;
    in_steps.push_back(i);
    step_streams.emplace(op.device, op.stream);
  }
  std::vector<uint32_t> queued_before;  // by calls that ended before the steps began
  for (uint32_t i = 0; i < input.ops.size(); ++i) {
    const ReplayOp& op = input.ops[i];
    if (op.call >= 0 && input.calls[op.call].end_ns <= first.start_ns && step_streams.count({op.device, op.stream})) {
      queued_before.push_back(i);
    }
  }
  for (const Timeline* timeline : timelines) {
    // A host that no longer waits runs ahead of its GPU: the steps end
    // when the work they issued does, where that is later, and begin when
    // the work queued before them on their streams is done, where that is
    // later (else the start-up's backlog, run while the host is in the
    // first steps, counts as theirs: 11 ms over 59 graph-replayed steps of
    // a PyTorch trace). Other streams' work may run beside the steps.
    int64_t start = host.map(tid, first.start_ns, *timeline);
    int64_t end = host.map(tid, last.end_ns, *timeline);
    for (uint32_t i : in_steps) end = std::max(end, timeline->end[calls + i]);
    for (uint32_t i : queued_before) start = std::max(start, timeline->end[calls + i]);
    phase.ns.push_back(saturating_sub(end, start));
  }
  return {phase};
}

std::vector<Phase> phases(const ReplayInput& input, const std::vector<const Timeline*>& timelines) {
  if (!input.ranges.empty()) return nvtx_phases(input, timelines);
  return periods(input, timelines);
}

}  // namespace apptracer::whatif
