#include "analyzer/ranks/stragglers.h"

#include <algorithm>
#include <map>
#include <unordered_set>
#include <utility>

#include "analyzer/trace/collectives.h"
#include "analyzer/trace/operations.h"
#include "analyzer/trace/step_names.h"
#include "apptracer/saturating.h"

namespace apptracer::ranks {

namespace {

using trace::ProcessId;

struct HostCall {
  int64_t start_ns;
  int64_t end_ns;
  int64_t name_id;
  bool synchronization;
};

struct GpuWork {
  int64_t start_ns;
  int64_t end_ns;
  trace::Operation op;
};

// (process, thread id) and (process, stream): a rank's host threads and GPU streams.
using Lane = std::pair<ProcessId, int64_t>;

// What the walk back reads of each rank: its threads' host calls and its
// streams' GPU work, each by end time.
class Timelines {
 public:
  explicit Timelines(trace::Trace& trace) {
    std::unordered_set<int64_t> sync_calls;
    const trace::TraceOperations& ops = trace.operations();
    for (const trace::Sync& sync : ops.syncs()) {
      if (sync.correlation()) sync_calls.insert(*sync.correlation());
    }
    for (const auto& call : trace.rows<ApiCallRow>()) {
      calls_[{call.process, call.tid}].push_back(
          {call.start_ns, call.end_ns, call.name_id, sync_calls.count(call.correlation_id) > 0});
    }
    for (const trace::Kernel& kernel : ops.kernels()) add_work(kernel.operation());
    for (const trace::Transfer& copy : ops.copies()) add_work(copy.operation());
    for (const trace::Transfer& memset : ops.memsets()) add_work(memset.operation());
    for (auto& [lane, calls] : calls_) sort_by_end(calls);
    for (auto& [lane, work] : work_) sort_by_end(work);
  }

  // The stream's GPU work that ended last at or before `ns`; null when none.
  const GpuWork* work_before(Lane stream, int64_t ns) const { return last_before(work_, stream, ns); }

  // What took most of [from, to) on the thread: one of its calls, or a gap
  // between calls (call null), with its part inside [from, to).
  struct Stretch {
    const HostCall* call = nullptr;
    int64_t start_ns = 0;
    int64_t end_ns = 0;
  };
  Stretch longest_stretch(Lane thread, int64_t from, int64_t to) const {
    Stretch best;
    int64_t best_inside = -1;
    auto consider = [&](const HostCall* call, int64_t start, int64_t end) {
      int64_t inside_start = std::max(start, from), inside_end = std::min(end, to);
      int64_t inside = elapsed_ns(inside_start, inside_end);
      if (inside > best_inside) best_inside = inside, best = {call, inside_start, inside_end};
    };
    auto found = calls_.find(thread);
    int64_t gap_start = INT64_MIN;
    if (found != calls_.end()) {
      for (const HostCall& call : found->second) {
        if (call.end_ns <= from) {
          gap_start = call.end_ns;
          continue;
        }
        if (call.start_ns >= to) {
          consider(nullptr, gap_start, call.start_ns);
          return best;
        }
        if (gap_start != INT64_MIN) consider(nullptr, gap_start, call.start_ns);
        consider(&call, call.start_ns, call.end_ns);
        gap_start = call.end_ns;
      }
    }
    if (gap_start != INT64_MIN) consider(nullptr, gap_start, to);
    return best;
  }

 private:
  void add_work(const trace::Operation& op) {
    if (op.stream) work_[{op.process, *op.stream}].push_back({op.start_ns, op.end_ns, op});
  }
  template <typename Item>
  static void sort_by_end(std::vector<Item>& items) {
    std::stable_sort(items.begin(), items.end(),
                     [](const Item& a, const Item& b) { return a.end_ns < b.end_ns; });
  }
  template <typename Item>
  static const Item* last_before(const std::map<Lane, std::vector<Item>>& lanes, Lane lane, int64_t ns) {
    auto found = lanes.find(lane);
    if (found == lanes.end()) return nullptr;
    const std::vector<Item>& items = found->second;
    auto after = std::upper_bound(items.begin(), items.end(), ns,
                                  [](int64_t at, const Item& item) { return at < item.end_ns; });
    return after == items.begin() ? nullptr : &*(after - 1);
  }

  std::map<Lane, std::vector<HostCall>> calls_;
  std::map<Lane, std::vector<GpuWork>> work_;
};

int64_t arrival_of(const trace::CollectiveCall& call) {
  return call.gpu_start_ns.value_or(call.api_start_ns);
}

// The outermost NVTX range of the process open at `ns`: its family, and the
// number in its name ("step 5") or else its occurrence among the process's
// ranges of that family.
void locate_step(trace::Trace& trace, ProcessId process, int64_t ns, Straggler& straggler) {
  const trace::Packed<NvtxRangeRow>* outermost = nullptr;
  for (const auto& range : trace.rows<NvtxRangeRow>()) {
    if (range.process != process || !range.end_ns || range.start_ns > ns || *range.end_ns < ns) continue;
    if (!outermost || range.depth.value_or(0) < outermost->depth.value_or(0)) outermost = &range;
  }
  if (!outermost) return;
  trace::StepName name = trace::step_name(trace.string(outermost->name_id, "?"));
  straggler.step_range = name.family;
  if (name.number) {
    straggler.step = *name.number;
    return;
  }
  for (const auto& range : trace.rows<NvtxRangeRow>()) {
    if (range.process == process && range.start_ns <= outermost->start_ns &&
        trace::step_name(trace.string(range.name_id, "?")).family == name.family) {
      ++straggler.step;
    }
  }
}

std::string work_name(trace::Trace& trace, const trace::Operation& op) {
  if (op.kind == trace::OpKind::Kernel) return std::string(trace.string(op.name_id, "?"));
  if (op.kind == trace::OpKind::Copy) return std::string(to_string(op.copy_kind)) + " copy";
  return std::string(trace::to_string(op.kind));
}

// What held the late rank back: its stream busy when the collective was
// issued, else the host before it issued it.
void walk_back(trace::Trace& trace, const Timelines& timelines, const trace::CollectiveCall& late,
               int64_t tid, Straggler& straggler) {
  int64_t issue_ns = late.api_start_ns;
  if (late.gpu_start_ns && late.stream) {
    const GpuWork* busy = timelines.work_before({late.process, *late.stream}, *late.gpu_start_ns);
    if (busy && busy->end_ns > issue_ns) {
      straggler.held_by = std::string(trace::to_string(busy->op.kind));
      straggler.cause = work_name(trace, busy->op);
      straggler.cause_start_ns = busy->start_ns;
      straggler.cause_ns = elapsed_ns(issue_ns, busy->end_ns);
      return;
    }
  }
  // Host-bound: what the thread did in the time it fell behind, just before
  // it issued the call (a long gap a few calls back, not only the last one),
  // counted within that time.
  int64_t behind_from = saturating_sub(issue_ns, std::max<int64_t>(straggler.late_by_ns, 1));
  Timelines::Stretch stretch = timelines.longest_stretch({late.process, tid}, behind_from, issue_ns);
  if (stretch.call) {
    straggler.held_by = stretch.call->synchronization ? "synchronization" : "host call";
    straggler.cause = std::string(trace.string(stretch.call->name_id, "?"));
  } else {
    straggler.held_by = "host gap";
  }
  straggler.cause_start_ns = stretch.start_ns;
  straggler.cause_ns = elapsed_ns(stretch.start_ns, stretch.end_ns);
}

}  // namespace

Stragglers find_stragglers(trace::Trace& trace, int64_t min_late_ns) {
  Stragglers stragglers;
  std::optional<Timelines> timelines;
  for (std::vector<trace::CollectiveCall>& calls : trace::read_collective_operations(trace)) {
    if (calls.size() < 2) continue;
    ++stragglers.joined;
    std::stable_sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) {
      return arrival_of(a) < arrival_of(b);
    });
    const trace::CollectiveCall& late = calls.back();
    int64_t arrival = arrival_of(late);
    int64_t late_by = elapsed_ns(arrival_of(calls[calls.size() - 2]), arrival);
    if (late_by < min_late_ns) continue;
    Straggler straggler;
    straggler.collective_id = late.id;
    straggler.kind = late.kind;
    straggler.nranks = static_cast<int64_t>(calls.size());
    straggler.late_process = late.process;
    straggler.arrival_ns = arrival;
    straggler.late_by_ns = late_by;
    for (size_t i = 0; i + 1 < calls.size(); ++i) {
      straggler.wait_ns = saturating_add(straggler.wait_ns, elapsed_ns(arrival_of(calls[i]), arrival));
    }
    int64_t tid = 0;
    if (const auto* row = trace.find<CollectiveRow>(late.id)) {
      straggler.seq = row->seq.optional();
      tid = row->tid;
      if (const auto* comm = trace.find<CommunicatorRow>(row->communicator_id)) {
        straggler.late_rank = comm->rank;
      }
    }
    locate_step(trace, late.process, late.api_start_ns, straggler);
    if (!timelines) timelines.emplace(trace);
    walk_back(trace, *timelines, late, tid, straggler);
    stragglers.late.push_back(std::move(straggler));
  }
  std::stable_sort(stragglers.late.begin(), stragglers.late.end(),
                   [](const Straggler& a, const Straggler& b) { return a.wait_ns > b.wait_ns; });
  return stragglers;
}

}  // namespace apptracer::ranks
