// Rules about time: the host blocked in synchronizations, the GPU left idle
// (and by which host calls), stretches of low GPU use, allocation churn,
// kernels too short for their launch.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analyzer/dvdg/labels.h"
#include "analyzer/diagnose/rules.h"

namespace apptracer::diagnose {

namespace {

// One piece of GPU work, for finding what ran around a gap: a kernel or a
// transfer (named when a finding shows it).
struct Work {
  int64_t start = 0, end = 0;
  const Kernel* kernel = nullptr;
  const Transfer* transfer = nullptr;
  const char* table = "";
  int64_t id = 0;
  NullableInt correlation;
  NullableInt api_start;
  NullableInt stream;

  std::string name() const { return kernel ? std::string(kernel->name) : transfer_name(*transfer); }
};

std::map<int64_t, std::vector<Work>> work_by_device(const TraceFacts& facts) {
  std::map<int64_t, std::vector<Work>> work;
  for (const Kernel& k : facts.kernels) {
    const trace::Packed<KernelRow>& row = *k.row;
    if (k.timed())
      work[row.device.value_or(0)].push_back({*row.gpu_start_ns, *row.gpu_end_ns, &k, nullptr, "kernels",
                                              row.id, row.call_correlation_id, row.api_start_ns, row.stream});
  }
  for (const auto* list : {&facts.copies, &facts.memsets}) {
    for (const Transfer& t : *list) {
      if (t.timed())
        work[t.device.value_or(0)].push_back({*t.gpu_start_ns, *t.gpu_end_ns, nullptr, &t,
                                              t.is_memset ? "memsets" : "memcpys", t.id,
                                              t.correlation, t.api_start_ns, t.stream});
    }
  }
  for (auto& [device, list] : work) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Work& a, const Work& b) { return a.start < b.start; });
  }
  return work;
}

// Time the next busy interval starts after `ns` (ns itself when busy then).
std::optional<int64_t> next_busy(const Intervals& busy, int64_t ns) {
  for (const auto& [start, end] : busy) {
    if (end < ns) continue;
    return std::max(start, ns);
  }
  return std::nullopt;
}

std::string fix_for_host_call(const std::string& name) {
  auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
  bool async = has("Async");
  if (has("Malloc") || has("Free") || has("HostAlloc") || has("HostRegister") ||
      has("MemAlloc") || has("MemFree")) {
    if (async) {
      return "keep the pool's memory between uses (cudaMemPoolSetAttribute "
             "cudaMemPoolAttrReleaseThreshold) or allocate once before the loop, so " + name +
             " does not go to the driver between GPU work";
    }
    return "allocate once before the loop and reuse the memory (or cudaMallocAsync from a pool) "
           "instead of calling " + name + " between GPU work";
  }
  if (has("Event") && has("Synchronize")) {
    return "queue the next GPU work before " + name +
           " so the GPU has work while the host waits for the event";
  }
  if (has("Synchronize") || has("Query")) {
    return "do not block in " + name +
           " here: wait on an event for the data the host needs, after queuing the next GPU work";
  }
  if ((has("Memcpy") || has("Memset")) && async) {
    // An asynchronous copy that held the host this long staged pageable memory.
    return "pin the host memory " + name + " copies (cudaMallocHost, or cudaHostRegister it "
           "once): from pageable memory it blocks the host until the copy is done";
  }
  if (has("Memcpy") || has("Memset")) {
    return "replace " + name + " by its Async form on a stream (pinned host memory) so the host "
           "queues GPU work while it runs";
  }
  return "the host spent the gap in " + name + ": queue the next GPU work before it";
}

constexpr const char* kGapEstimate =
    "the part of each gap before the host issued the next GPU work, at most the GPU work that "
    "follows it (to the next gap): queued first, that work runs while the host works";

}  // namespace

void sync_api(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  auto busy = facts.busy_by_device();
  struct Group {
    Finding finding;
    int64_t count = 0, blocked = 0, idle_after = 0, overlappable = 0;
  };
  std::map<std::tuple<int, std::string, int64_t>, Group> groups;
  for (const Sync& sync : facts.syncs) {
    const HostCall* call = facts.call(sync.correlation);
    std::string name =
        call ? std::string(call->name) : std::string(to_string(sync.kind)) + " synchronization";
    Group& group = groups[{static_cast<int>(sync.kind), name, sync.tid.value_or(0)}];
    if (group.count++ == 0) locate(context, group.finding, sync.correlation, sync.start_ns);
    int64_t blocked = elapsed_ns(sync.start_ns, sync.end_ns);
    group.blocked = saturating_add(group.blocked, blocked);
    // The GPU ran dry at the sync: idle until the host queues new work. Work
    // after the sync's process ended is another run's (a merged trace), not
    // what this sync held back.
    int64_t idle = 0;
    int64_t run_end = facts.process_end_ns(sync.process);
    for (auto& [device, intervals] : busy) {
      if (sync.device && *sync.device != device) continue;
      std::optional<int64_t> next = next_busy(intervals, sync.end_ns);
      if (next && *next <= run_end) idle = std::max(idle, elapsed_ns(sync.end_ns, *next));
    }
    group.idle_after = saturating_add(group.idle_after, idle);
    // Not waiting lets the host's work until the next launch run while the
    // GPU finishes what the sync waited for: the shorter of the two goes.
    group.overlappable = saturating_add(group.overlappable, std::min(blocked, idle));
    add_row(context, group.finding, "syncs", sync.id);
  }
  for (auto& [key, group] : groups) {
    // A sync the GPU had nothing to follow (the last one, say) cost nothing but waiting.
    if (group.blocked < context.limits.min_blocked_ns ||
        group.overlappable < context.limits.min_cost_ns)
      continue;
    Finding& f = group.finding;
    const std::string& name = std::get<1>(key);
    f.rule = "sync_api";
    f.what = std::to_string(group.count) + " " + name + " call(s) on thread " +
             std::to_string(std::get<2>(key)) + " blocked the host for " +
             format_ns(group.blocked) + "; the GPU then waited " + format_ns(group.idle_after) +
             " for new work";
    f.names.push_back(name);
    f.cost_ns = group.blocked;
    f.saving_ns = group.overlappable;
    f.claim = "GPU idle time";
    f.estimate = "per synchronization, the GPU idle time after it until the host queued more "
                 "work, at most the time the host blocked in it: the host's work overlaps the "
                 "GPU's instead of following it";
    f.fix = static_cast<SyncKind>(std::get<0>(key)) == SyncKind::Event
                ? "queue the next GPU work before " + name +
                      " so the GPU has work while the host waits for the event"
                : "wait only for what the host needs (cudaEventSynchronize on an event after the "
                  "producing work, cudaStreamWaitEvent between streams) instead of " + name +
                      ", and queue the next GPU work before waiting";
    findings.push_back(std::move(f));
  }
}

void gpu_idle_gap(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  struct Gap {
    int64_t device, start, end;
    const Work* before;
    const Work* after;
    // GPU busy time from the gap's end to the device's next gap: the work
    // that, queued before the host's work, would have run under it.
    int64_t following = 0;
  };
  auto work = work_by_device(facts);
  auto busy = facts.busy_by_device();
  std::vector<Gap> gaps;
  for (auto& [device, list] : work) {
    const Intervals& intervals = busy[device];
    std::unordered_map<int64_t, const Work*> ending, starting;
    for (const Work& w : list) {
      ending[w.end] = &w;
      starting.emplace(w.start, &w);
    }
    size_t first_of_device = gaps.size();
    for (size_t i = 0; i + 1 < intervals.size(); ++i) {
      int64_t start = intervals[i].second, end = intervals[i + 1].first;
      if (elapsed_ns(start, end) < context.limits.min_gap_ns) continue;
      gaps.push_back({device, start, end, ending[start], starting[end]});
    }
    for (size_t g = first_of_device; g < gaps.size(); ++g) {
      int64_t until = g + 1 < gaps.size() ? gaps[g + 1].start : INT64_MAX;
      gaps[g].following = covered_ns(intervals, gaps[g].end, until);
    }
  }
  int64_t steady_from = facts.startup_end_ns.value_or(INT64_MIN);
  std::stable_sort(gaps.begin(), gaps.end(), [](const Gap& a, const Gap& b) {
    return elapsed_ns(a.start, a.end) > elapsed_ns(b.start, b.end);
  });
  Finding rest;
  int64_t rest_count = 0;
  for (size_t g = 0; g < gaps.size(); ++g) {
    const Gap& gap = gaps[g];
    int64_t length = elapsed_ns(gap.start, gap.end);
    const HostCall* issuer = gap.after ? facts.call(gap.after->correlation) : nullptr;
    int64_t issue = issuer ? issuer->start_ns
                           : (gap.after && gap.after->api_start ? *gap.after->api_start : gap.end);
    int64_t late = std::min(elapsed_ns(gap.start, issue), length);
    // Queuing that work before the host's own lets it run under it: no more
    // of the gap goes than the work there was to run.
    int64_t saving = std::min(late, gap.following);
    if (static_cast<int64_t>(g) >= context.limits.max_gap_findings) {
      if (rest_count++ == 0) {
        rest.rule = "gpu_idle_gap";
        rest.claim = "GPU idle time";
        rest.saving_ns = 0;
      }
      rest.cost_ns = saturating_add(rest.cost_ns, length);
      *rest.saving_ns = saturating_add(*rest.saving_ns, saving);
      continue;
    }
    // What the host did between the GPU running dry and issuing the next work.
    std::map<std::string, std::pair<int64_t, int64_t>> by_call;  // name -> (time, calls)
    Intervals in_calls;
    auto first = std::lower_bound(
        facts.all_calls.begin(), facts.all_calls.end(), gap.start,
        [](const HostCall& c, int64_t ns) { return c.start_ns < ns; });
    auto from = first - std::min<ptrdiff_t>(first - facts.all_calls.begin(), 64);
    for (auto c = from; c != facts.all_calls.end() && c->start_ns < issue; ++c) {
      if (issuer && c->id == issuer->id) continue;
      int64_t a = std::max(c->start_ns, gap.start), b = std::min(c->end_ns, issue);
      if (b <= a) continue;
      auto& entry = by_call[std::string(c->name)];
      entry.first = saturating_add(entry.first, elapsed_ns(a, b));
      ++entry.second;
      in_calls.emplace_back(a, b);
    }
    merge_intervals(in_calls);
    int64_t outside = late - covered_ns(in_calls, gap.start, saturating_add(gap.start, late));
    std::string dominant;
    int64_t dominant_ns = outside;
    std::string during;
    std::vector<std::pair<int64_t, std::string>> ranked;
    for (auto& [name, entry] : by_call) {
      ranked.emplace_back(entry.first, name);
      if (entry.first > dominant_ns) {
        dominant = name;
        dominant_ns = entry.first;
      }
    }
    std::sort(ranked.rbegin(), ranked.rend());
    for (size_t i = 0; i < ranked.size() && i < 3; ++i) {
      during += (during.empty() ? "" : ", ") + format_ns(ranked[i].first) + " in " +
                ranked[i].second + " (" + std::to_string(by_call[ranked[i].second].second) +
                " call(s))";
    }
    if (outside > 0) {
      during += (during.empty() ? "" : ", ") + format_ns(outside) + " outside CUDA calls";
    }
    Finding f;
    f.rule = "gpu_idle_gap";
    f.what = "device " + std::to_string(gap.device) + " idle for " + format_ns(length) +
             (gap.before ? " after " + gap.before->name() : std::string()) +
             (gap.after ? " until " + gap.after->name() : std::string()) + "; the host issued it " +
             format_ns(late) + " after the GPU ran dry" +
             (during.empty() ? "" : ": " + during);
    if (gap.before) {
      add_row(context, f, gap.before->table, gap.before->id);
      add_name(f, gap.before->name());
    }
    if (gap.after) {
      add_row(context, f, gap.after->table, gap.after->id);
      add_name(f, gap.after->name());
      locate(context, f, gap.after->correlation, issue);
    }
    f.cost_ns = length;
    f.saving_ns = saving;
    f.claim = "GPU idle time";
    f.estimate = kGapEstimate;
    f.fix = dominant.empty() ? "the host computed for " + format_ns(outside) +
                                   " outside CUDA calls: queue the next GPU work before that CPU "
                                   "work (or move it to another thread)"
                             : fix_for_host_call(dominant);
    // Start-up is paid once: its own finding, not one more step's gap.
    if (gap.start < steady_from) f.fix = "at start-up, before the first steady step: " + f.fix;
    findings.push_back(std::move(f));
  }
  if (rest_count > 0) {
    rest.what = std::to_string(rest_count) + " more GPU idle gaps of at least " +
                format_ns(context.limits.min_gap_ns) + " (" + format_ns(rest.cost_ns) + " in all)";
    rest.estimate = kGapEstimate;
    rest.fix = "see the longest gaps above: the same causes usually repeat";
    findings.push_back(std::move(rest));
  }
}

void gpu_low_utilization(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  auto busy = facts.busy_by_device();
  // By device, so that devices' findings of equal cost list in that order.
  for (auto& [device, intervals] : std::map<int64_t, Intervals>(busy.begin(), busy.end())) {
    if (intervals.empty()) continue;
    int64_t begin = intervals.front().first, end = intervals.back().second;
    int64_t chunks = std::max<int64_t>(1, context.limits.utilization_chunks);
    int64_t span = elapsed_ns(begin, end);
    int64_t chunk = std::max<int64_t>(1, span / chunks + (span % chunks != 0));
    auto flush = [&](int64_t from, int64_t to) {
      int64_t length = elapsed_ns(from, to);
      int64_t busy = covered_ns(intervals, from, to);
      int64_t idle = length - busy;
      if (idle < context.limits.min_gap_ns) return;
      Finding f;
      f.rule = "gpu_low_utilization";
      f.what = "device " + std::to_string(device) + " busy " +
               std::to_string(static_cast<int>(100.0 * busy / length)) + "% of " +
               format_ns(length) + " (" + format_ns(facts.origin.since(from)) + " to " +
               format_ns(facts.origin.since(to)) + " into the trace)";
      f.nvtx = facts.nvtx_at(std::nullopt, from);
      // Each device's stretches are its own finding: summed over devices,
      // idle time would count the run's time once per GPU and could exceed it.
      f.names.push_back("device " + std::to_string(device));
      f.cost_ns = idle;
      f.estimate = "the gpu_idle_gap findings in this stretch say what kept the GPU waiting and "
                   "what removing it saves";
      f.fix = "keep the GPU queued here: remove the host stalls listed as gpu_idle_gap, or "
              "overlap the CPU work with GPU work";
      findings.push_back(std::move(f));
    };
    // As many chunks as asked for, whatever the span: never a step per nanosecond.
    std::optional<int64_t> run_start;
    for (int64_t from = begin; from < end; from = saturating_add(from, chunk)) {
      int64_t to = std::min(end, saturating_add(from, chunk));
      bool low = covered_ns(intervals, from, to) <
                 context.limits.low_utilization * static_cast<double>(to - from);
      if (low && !run_start) run_start = from;
      if (!low && run_start) {
        flush(*run_start, from);
        run_start.reset();
      }
    }
    if (run_start) flush(*run_start, end);
  }
}

void allocation_churn(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  std::map<std::tuple<int, int64_t, int64_t>, std::vector<const Allocation*>> groups;
  for (const Allocation& a : facts.allocations) {
    switch (a.kind) {
      case AllocKind::Device:
      case AllocKind::Pool:
      case AllocKind::Managed:
      case AllocKind::PinnedHost:
      case AllocKind::WriteCombinedHost:
      case AllocKind::MappedHost:
      case AllocKind::RegisteredHost: break;
      default: continue;
    }
    groups[{static_cast<int>(a.kind), a.bytes, a.device.value_or(-1)}].push_back(&a);
  }
  auto call_ns = [&](std::optional<int64_t> correlation) {
    const HostCall* call = facts.call(correlation);
    return call ? call->duration() : 0;
  };
  for (auto& [key, list] : groups) {
    std::stable_sort(list.begin(), list.end(), [](const Allocation* a, const Allocation* b) {
      return a->alloc_ns < b->alloc_ns;
    });
    std::optional<int64_t> earliest_free;
    int64_t cycles = 0, now = 0;
    for (const Allocation* a : list) {
      if (earliest_free && *earliest_free <= a->alloc_ns) ++cycles;
      if (a->free_ns) earliest_free = std::min(earliest_free.value_or(*a->free_ns), *a->free_ns);
      now = saturating_add(now, saturating_add(call_ns(a->alloc_correlation), call_ns(a->free_correlation)));
    }
    if (cycles < context.limits.churn_cycles) continue;
    const Allocation& first = *list.front();
    Finding f;
    locate(context, f, first.alloc_correlation, first.alloc_ns);
    for (const Allocation* a : list) add_row(context, f, "allocations", a->id);
    bool pinned = first.kind != AllocKind::Device && first.kind != AllocKind::Pool &&
                  first.kind != AllocKind::Managed;
    f.rule = "allocation_churn";
    f.what = std::to_string(list.size()) + " " + std::string(to_string(first.kind)) +
             " allocations of " + dvdg::format_bytes(first.bytes) + ", " +
             std::to_string(cycles) + " of them made after an earlier one was freed";
    f.names.push_back(std::to_string(list.size()) + " x " + std::string(to_string(first.kind)) +
                      " " + dvdg::format_bytes(first.bytes));
    f.cost_ns = now;
    set_saving(f, now,
               static_cast<double>(call_ns(first.alloc_correlation)) +
                   static_cast<double>(call_ns(first.free_correlation)),
               "one allocation and one free instead of " + std::to_string(list.size()));
    f.fix = pinned ? "pin the host buffer once and reuse it: page-locking and unlocking memory "
                     "costs far more than a copy"
            : first.kind == AllocKind::Pool
                ? "keep the pool's memory between uses (cudaMemPoolSetAttribute "
                  "cudaMemPoolAttrReleaseThreshold) or allocate once outside the loop"
            : first.kind == AllocKind::Managed
                ? "allocate the managed buffer once outside the loop and reuse it"
                : "allocate once outside the loop and reuse the buffer (or cudaMallocAsync / "
                  "cudaFreeAsync with a memory pool)";
    findings.push_back(std::move(f));
  }
}

void launch_bound_kernels(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  auto work = work_by_device(facts);
  // Per kernel name: short launches, the GPU idle before each on its stream,
  // and the part of that idle time the host spent launching them.
  // A kernel's first launch on a device loads its module (CUDA loads them
  // lazily), which a CUDA graph pays as well: only later launches count.
  struct Group {
    Finding finding;
    int64_t count = 0, gpu = 0, waiting = 0;
    int64_t later = 0, launch = 0, in_launch = 0;  // launches after the first on each device
  };
  std::map<std::string, Group> groups;
  for (auto& [device, list] : work) {
    auto short_kernel = [&](const Work& w) {
      return w.kernel && elapsed_ns(w.start, w.end) < context.limits.short_kernel_ns;
    };
    // The host launching short kernels on this device: their calls, but for
    // each kernel's first (its module load).
    std::vector<bool> first(list.size(), false);
    Intervals launching;
    std::set<std::string> launched;
    for (size_t i = 0; i < list.size(); ++i) {
      if (!short_kernel(list[i])) continue;
      first[i] = launched.insert(list[i].name()).second;
      const HostCall* call = facts.call(list[i].correlation);
      if (call && !first[i]) launching.emplace_back(call->start_ns, call->end_ns);
    }
    merge_intervals(launching);
    struct Last {
      int64_t end = 0;
      bool short_kernel = false;
    };
    std::map<int64_t, Last> stream_last;  // stream -> its previous work
    for (size_t i = 0; i < list.size(); ++i) {
      const Work& w = list[i];
      int64_t stream = w.stream.value_or(-1);
      auto previous = stream_last.find(stream);
      int64_t idle_from = previous != stream_last.end() ? previous->second.end : w.start;
      int64_t idle = elapsed_ns(idle_from, w.start);
      bool after_short = previous != stream_last.end() && previous->second.short_kernel;
      stream_last[stream] = {w.end, short_kernel(w)};
      if (!short_kernel(w)) continue;
      Group& group = groups[w.name()];
      if (group.count++ == 0) locate(context, group.finding, w.correlation, w.start);
      group.gpu = saturating_add(group.gpu, elapsed_ns(w.start, w.end));
      add_row(context, group.finding, "kernels", w.id);
      if (const HostCall* call = facts.call(w.correlation); call && !first[i]) {
        ++group.later;
        group.launch = saturating_add(group.launch, call->duration());
      }
      // Only waits inside a launch-bound stretch count: right after another
      // short kernel on the stream, and shorter than a GPU idle gap (a
      // launch takes microseconds; a longer wait is the host doing something
      // else, such as the program's start-up or loading data, which
      // gpu_idle_gap reports with its cause).
      if (first[i] || !after_short || idle >= context.limits.min_gap_ns) continue;
      group.waiting = saturating_add(group.waiting, idle);
      // The GPU waits on launching while the host is in any launch call, not
      // only this kernel's: a kernel starts microseconds after its call
      // returns, by which time a tight loop is in the next call. The host's
      // time between the calls is its own work, which stays.
      group.in_launch = saturating_add(group.in_launch, covered_ns(launching, idle_from, w.start));
    }
  }
  for (auto& [name, group] : groups) {
    if (group.count < context.limits.short_kernel_count || group.in_launch < context.limits.min_cost_ns)
      continue;
    Finding& f = group.finding;
    f.rule = "launch_bound_kernels";
    f.what = std::to_string(group.count) + " launches of " + name + " ran " +
             format_ns(group.gpu / group.count) + " each on the GPU and took " +
             format_ns(group.launch / group.later) + " each to launch; the GPU waited " +
             format_ns(group.waiting) + " between them";
    f.names.push_back(name);
    f.cost_ns = group.waiting;
    f.saving_ns = group.in_launch;
    f.claim = "GPU idle time";
    f.estimate = "the GPU idle time between these launches while the host was inside launch "
                 "calls, which a CUDA graph (or one fused kernel) removes; the host's "
                 "own time between the calls stays, and so does each kernel's first launch on a "
                 "device, which loads its module";
    f.fix = "capture the launch loop in a CUDA graph (cudaStreamBeginCapture, cudaGraphLaunch) "
            "or fuse the work into fewer, larger kernels";
    findings.push_back(std::move(f));
  }
}

}  // namespace apptracer::diagnose
