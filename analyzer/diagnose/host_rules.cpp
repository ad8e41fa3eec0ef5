// Rules about time: the host blocked in synchronizations, the GPU left idle
// (and by which host calls), stretches of low GPU use, allocation churn.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analyzer/dvdg/labels.h"
#include "analyzer/diagnose/rules.h"
#include "analyzer/trace/short_names.h"

namespace apptracer::diagnose {

namespace {

// One piece of GPU work, for finding what ran around a gap: a kernel or a
// transfer (named when a finding shows it). Held by the million, so only its
// times and what it is; the rest is read from it for the few gaps found.
struct Work {
  int64_t start = 0, end = 0;
  const Kernel* kernel = nullptr;
  const Transfer* transfer = nullptr;

  const char* table() const { return kernel ? "kernels" : transfer->is_memset() ? "memsets" : "memcpys"; }
  int64_t id() const { return kernel ? kernel->row->id : transfer->id(); }
  NullableInt correlation() const { return kernel ? kernel->row->call_correlation_id : transfer->correlation(); }
  NullableInt api_start() const { return kernel ? kernel->row->api_start_ns : transfer->api_start_ns(); }
  trace::ProcessId process() const { return kernel ? kernel->row->process : transfer->process(); }
  std::string name() const { return kernel ? std::string(kernel->name) : transfer_name(*transfer); }
};

// Calls `visit(device, work)` for each piece of timed GPU work, in the
// trace's order: kernels, then copies, then memsets.
template <typename Visit>
void each_work(const TraceFacts& facts, Visit&& visit) {
  for (const Kernel& k : facts.ops().kernels()) {
    const auto& row = *k.row;
    if (k.timed()) visit(row.device.value_or(0), Work{*row.gpu_start_ns, *row.gpu_end_ns, &k, nullptr});
  }
  for (const auto* list : {&facts.ops().copies(), &facts.ops().memsets()}) {
    for (const Transfer& t : *list) {
      if (t.timed()) visit(t.device().value_or(0), Work{*t.gpu_start_ns(), *t.gpu_end_ns(), nullptr, &t});
    }
  }
}

// The module (or scope) that launched `kernel`; "" where the trace says none.
std::string_view issuing_module(const TraceFacts& facts, const Kernel& kernel) {
  trace::FrameworkContext context = facts.ops().framework_context(kernel);
  return context.module_id ? facts.ops().string(context.module_id, "?") : "";
}

// Time the next busy interval starts after `ns` (ns itself when busy then).
std::optional<int64_t> next_busy(const Intervals& busy, int64_t ns) {
  // Merged intervals end in order too: the first ending at `ns` or later.
  auto first = std::lower_bound(busy.begin(), busy.end(), ns,
                                [](const std::pair<int64_t, int64_t>& interval, int64_t at) {
                                  return interval.second < at;
                                });
  if (first == busy.end()) return std::nullopt;
  return std::max(first->first, ns);
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

// Where a PyTorch host spent most of a gap's time outside CUDA calls in the
// DataLoader's scope (torch names it "enumerate(DataLoader)#" and the
// iterator's __next__): loading the next batch itself (no workers), or
// waiting for its workers.
enum class BatchLoading { No, OnTheThread, FromWorkers };

// The host worked outside CUDA calls while the GPU waited, before work
// `next_module` issued, loading batches or not. JAX queues a jitted call's work and returns: between
// steps its host works on Python, on the call's own dispatch (one jitted
// step of 66 arrays took 0.7 ms untraced, bench/RESULTS.md) or on reading
// results back.
std::string host_work_fix(const TraceFacts& facts, std::string_view next_module, BatchLoading loading) {
  trace::Framework framework = facts.framework;
  if (loading == BatchLoading::OnTheThread) {
    return "the host loaded the next batch while the GPU waited (the DataLoader's __next__, on the training "
           "thread): load batches in worker processes (DataLoader(num_workers=4, persistent_workers=True, "
           "pin_memory=True)) so the next one is ready when the step asks for it";
  }
  if (loading == BatchLoading::FromWorkers) {
    return "the host waited for the next batch while the GPU waited (the DataLoader's __next__): its "
           "workers cannot keep up: more of them (num_workers), more batches ahead (prefetch_factor), or "
           "less work per sample in the dataset and collate_fn";
  }
  // Before the optimizer's kernels (torch names its step's scope
  // "Optimizer.step#AdamW.step"), the host ran its per-parameter Python.
  if (framework == trace::Framework::Pytorch && next_module.substr(0, 15) == "Optimizer.step#") {
    std::string ran = "the host ran the optimizer's Python (" + std::string(next_module) + ") while the GPU waited: ";
    if (facts.optimizer_fused()) {
      return ran + "it runs fused already; compile the step (torch.compile around optimizer.step()) or "
                   "capture it in a CUDA graph (capturable=True, torch.cuda.graphs), which leave its Python "
                   "out of the step";
    }
    return ran + "use its fused implementation (fused=True) or compile the step (torch.compile around "
                 "optimizer.step()), which launch its work with less host time per parameter";
  }
  if (framework == trace::Framework::Jax) {
    return "the host computed outside CUDA calls while the GPU waited (Python, JAX's dispatch of the "
           "next call, or a result read on the host): do not read results every step (float(loss), "
           "jax.device_get), prepare batches on another thread, or run several steps per jitted call "
           "(jax.lax.scan over a few batches)";
  }
  return "the host computed outside CUDA calls while the GPU waited: queue the next GPU work before "
         "that CPU work (or move it to another thread)";
}

constexpr const char* kGapEstimate =
    "the part of each gap before the host issued the next GPU work, at most the GPU work that "
    "follows it (to the next gap): queued first, that work runs while the host works";

// Per thread, the end of each copy call and whether it copied host to
// device, by end: PyTorch makes a copy to the GPU from pageable memory
// blocking (.cuda(), .to(device)) with a synchronization right after its
// cudaMemcpyAsync on the same thread.
using CopyCalls = std::map<int64_t, std::vector<std::pair<int64_t, bool>>>;

CopyCalls copy_calls_by_thread(const TraceFacts& facts) {
  CopyCalls by_thread;
  for (const Transfer& copy : facts.ops().copies()) {
    const HostCall* call = facts.ops().call(copy.correlation());
    if (call) by_thread[call->tid()].emplace_back(call->end_ns(), copy.kind() == CopyKind::HtoD);
  }
  for (auto& [tid, calls] : by_thread) std::sort(calls.begin(), calls.end());
  return by_thread;
}

// Whether `sync` waited for a host-to-device copy its thread had just issued.
bool follows_a_copy_to_the_gpu(const CopyCalls& copies, const Sync& sync, int64_t within_ns) {
  auto thread = copies.find(sync.tid().value_or(0));
  if (thread == copies.end()) return false;
  const auto& calls = thread->second;
  auto after = std::upper_bound(calls.begin(), calls.end(), std::make_pair(sync.start_ns(), true));
  if (after == calls.begin()) return false;
  const auto& [end_ns, htod] = *std::prev(after);
  return htod && elapsed_ns(end_ns, sync.start_ns()) <= within_ns;
}

// PyTorch's fix for `waits` synchronizations, `after_copies` of them a
// blocking copy's own.
std::string pytorch_sync_fix(int64_t waits, int64_t after_copies) {
  const std::string copy_fix =
      "PyTorch waits for each copy to the GPU from pageable memory (.cuda(), .to(device)): pin the "
      "source (DataLoader(pin_memory=True), tensor.pin_memory()) and copy with non_blocking=True, and "
      "the host queues work while it runs";
  const std::string read_fix =
      "do not read GPU results on the host every step (loss.item(), .cpu(), .tolist(), printing a CUDA "
      "tensor, torch.cuda.synchronize()): keep them on the GPU and read them every N steps, or copy them "
      "with non_blocking=True into pinned memory";
  if (after_copies == 0) return read_fix;
  if (after_copies == waits) return copy_fix;
  return std::to_string(after_copies) + " of them wait for copies to the GPU: " + copy_fix + "; the other " +
         std::to_string(waits - after_copies) + ": " + read_fix;
}

}  // namespace

void sync_api(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  const auto& busy = facts.busy_by_device();
  const CopyCalls copies = copy_calls_by_thread(facts);
  struct Group {
    Finding finding;
    int64_t count = 0, blocked = 0, idle_after = 0, overlappable = 0;
    int64_t after_copies = 0;  // waits for a copy to the GPU its thread had just issued
  };
  std::map<std::tuple<int, std::string, int64_t>, Group> groups;
  for (const Sync& sync : facts.ops().syncs()) {
    const HostCall* call = facts.ops().call(sync.correlation());
    std::string name =
        call ? std::string(call->name) : std::string(to_string(sync.kind())) + " synchronization";
    Group& group = groups[{static_cast<int>(sync.kind()), name, sync.tid().value_or(0)}];
    if (group.count++ == 0) locate(context, group.finding, sync.correlation(), sync.start_ns());
    int64_t blocked = elapsed_ns(sync.start_ns(), sync.end_ns());
    group.blocked = saturating_add(group.blocked, blocked);
    // The GPU ran dry at the sync: idle until the host queues new work. Work
    // after the sync's process ended is another run's (a merged trace), not
    // what this sync held back.
    int64_t idle = 0;
    int64_t run_end = facts.process_end_ns(sync.process());
    for (auto& [device, intervals] : busy) {
      if (sync.device() && *sync.device() != device) continue;
      std::optional<int64_t> next = next_busy(intervals, sync.end_ns());
      if (next && *next <= run_end) idle = std::max(idle, elapsed_ns(sync.end_ns(), *next));
    }
    group.idle_after = saturating_add(group.idle_after, idle);
    // Not waiting lets the host's work until the next launch run while the
    // GPU finishes what the sync waited for: the shorter of the two goes.
    group.overlappable = saturating_add(group.overlappable, std::min(blocked, idle));
    if (follows_a_copy_to_the_gpu(copies, sync, context.limits.copy_sync_ns)) ++group.after_copies;
    add_row(context, group.finding, "syncs", sync.id());
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
    f.events = group.count;
    f.cost_ns = group.blocked;
    f.saving_ns = group.overlappable;
    f.claim = "GPU idle time";
    // Tracing slows the host, not the GPU, which moves the estimate both
    // ways: untraced, the host reaches the sync sooner, with more GPU work
    // still queued to wait for (a step host-bound traced may be GPU-bound
    // untraced), and its work after the sync is shorter, so the GPU idles
    // less (bench/RESULTS.md: +16% on a twin that prepares its batch on the
    // host, far under on a launch-bound one).
    f.estimate = "per synchronization, the GPU idle time after it until the host queued more "
                 "work, at most the time the host blocked in it: the host's work overlaps the "
                 "GPU's instead of following it. Taken from the traced run: tracing slows the "
                 "host, so untraced it waits longer at the synchronization and works less after it";
    f.fix = facts.framework == trace::Framework::Pytorch
                ? pytorch_sync_fix(group.count, group.after_copies)
            : static_cast<SyncKind>(std::get<0>(key)) == SyncKind::Event
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
    std::optional<Work> before;
    std::optional<Work> after;
    // GPU busy time from the gap's end to the device's next gap: the work
    // that, queued before the host's work, would have run under it.
    int64_t following = 0;
  };
  std::map<int64_t, std::pair<size_t, size_t>> device_gaps;  // device -> its gaps' range, by start
  each_work(facts, [&](int64_t device, const Work&) { device_gaps.try_emplace(device); });
  std::vector<Gap> gaps;
  for (auto& [device, range] : device_gaps) {
    const Intervals& intervals = facts.busy_on(device);
    range.first = gaps.size();
    for (size_t i = 0; i + 1 < intervals.size(); ++i) {
      int64_t start = intervals[i].second, end = intervals[i + 1].first;
      if (elapsed_ns(start, end) < context.limits.min_gap_ns) continue;
      gaps.push_back({device, start, end, std::nullopt, std::nullopt});
    }
    range.second = gaps.size();
    for (size_t g = range.first; g < range.second; ++g) {
      int64_t until = g + 1 < range.second ? gaps[g + 1].start : INT64_MAX;
      gaps[g].following = covered_ns(intervals, gaps[g].end, until);
    }
  }
  // The work a gap follows: of the work ending as it starts, the one
  // starting last (the last in the trace's order among those); the work it
  // ends with: the first in the trace's order starting as it ends. Found in
  // one pass over the work, not a list of it: a training trace has millions.
  each_work(facts, [&](int64_t device, const Work& work) {
    auto [first, last] = device_gaps[device];
    auto gap_at = [&](int64_t ns, auto boundary) -> Gap* {
      auto found = std::lower_bound(gaps.begin() + static_cast<ptrdiff_t>(first), gaps.begin() + static_cast<ptrdiff_t>(last), ns,
                                    [&](const Gap& gap, int64_t at) { return boundary(gap) < at; });
      return found != gaps.begin() + static_cast<ptrdiff_t>(last) && boundary(*found) == ns ? &*found : nullptr;
    };
    if (Gap* gap = gap_at(work.end, [](const Gap& g) { return g.start; }); gap && (!gap->before || work.start >= gap->before->start))
      gap->before = work;
    if (Gap* gap = gap_at(work.start, [](const Gap& g) { return g.end; }); gap && !gap->after) gap->after = work;
  });
  int64_t steady_from = facts.ops().startup_end_ns().value_or(INT64_MIN);
  std::stable_sort(gaps.begin(), gaps.end(), [](const Gap& a, const Gap& b) {
    return elapsed_ns(a.start, a.end) > elapsed_ns(b.start, b.end);
  });
  // One finding per cause: the host call the host spent most of the gaps in
  // (or its own work outside CUDA calls), on one device, at start-up or not.
  struct Cause {
    Finding finding;
    int64_t count = 0, late = 0, longest = 0;
    std::map<std::string, std::pair<int64_t, int64_t>> by_call;  // name -> (time, calls)
    int64_t outside = 0;
    std::string longest_text;
  };
  enum class Phase { Steady, Startup, Compiling };
  std::map<std::tuple<Phase, int64_t, std::string, BatchLoading>, Cause> causes;
  for (const Gap& gap : gaps) {
    int64_t length = elapsed_ns(gap.start, gap.end);
    const HostCall* issuer = gap.after ? facts.ops().call(gap.after->correlation()) : nullptr;
    int64_t issue = issuer ? issuer->start_ns()
                           : (gap.after && gap.after->api_start() ? *gap.after->api_start() : gap.end);
    int64_t late = std::min(elapsed_ns(gap.start, issue), length);
    // Queuing that work before the host's own lets it run under it: no more
    // of the gap goes than the work there was to run.
    int64_t saving = std::min(late, gap.following);
    // What the host did between the GPU running dry and issuing the next work.
    std::map<std::string, std::pair<int64_t, int64_t>> by_call;  // name -> (time, calls)
    Intervals in_calls;
    auto first = std::lower_bound(
        facts.ops().calls().begin(), facts.ops().calls().end(), gap.start,
        [](const HostCall& c, int64_t ns) { return c.start_ns() < ns; });
    auto from = first - std::min<ptrdiff_t>(first - facts.ops().calls().begin(), 64);
    for (auto c = from; c != facts.ops().calls().end() && c->start_ns() < issue; ++c) {
      if (issuer && c->id() == issuer->id()) continue;
      int64_t a = std::max(c->start_ns(), gap.start), b = std::min(c->end_ns(), issue);
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
    for (auto& [name, entry] : by_call) {
      if (entry.first > dominant_ns) {
        dominant = name;
        dominant_ns = entry.first;
      }
    }
    BatchLoading loading = BatchLoading::No;
    if (dominant.empty() && issuer && facts.framework == trace::Framework::Pytorch) {
      auto in_scopes = [&](std::string_view prefix) {
        return facts.ops().time_in_scopes(issuer->process(), issuer->tid(), gap.start, issue, prefix);
      };
      int64_t in_loader = in_scopes("enumerate(DataLoader)#");
      if (2 * in_loader > outside) {
        loading = 2 * in_scopes("enumerate(DataLoader)#_SingleProcessDataLoaderIter") > in_loader
                      ? BatchLoading::OnTheThread
                      : BatchLoading::FromWorkers;
      }
    }
    bool at_startup = gap.start < steady_from;
    // The GPU idle while XLA compiled a new shape (and the host traced and
    // lowered it first): the compiler's, part of xla_compile's finding.
    bool compiling = !at_startup && gap.after && facts.compiled_ns(gap.after->process(), gap.start, gap.end) > 0;
    Cause& cause = causes[{at_startup ? Phase::Startup : compiling ? Phase::Compiling : Phase::Steady, gap.device,
                           dominant, loading}];
    Finding& f = cause.finding;
    if (cause.count++ == 0) {
      f.rule = "gpu_idle_gap";
      f.claim = "GPU idle time";
      f.estimate = kGapEstimate;
      f.saving_ns = 0;
      std::string_view next_module =
          gap.after && gap.after->kernel ? issuing_module(facts, *gap.after->kernel) : std::string_view();
      f.fix = !dominant.empty() ? fix_for_host_call(dominant) : host_work_fix(facts, next_module, loading);
      // Start-up is paid once: its own finding, not one more step's gap.
      if (at_startup) f.fix = "at start-up, before the first steady step: " + f.fix;
    }
    cause.late = saturating_add(cause.late, late);
    cause.outside = saturating_add(cause.outside, outside);
    for (auto& [name, entry] : by_call) {
      auto& total = cause.by_call[name];
      total.first = saturating_add(total.first, entry.first);
      total.second += entry.second;
    }
    f.cost_ns = saturating_add(f.cost_ns, length);
    *f.saving_ns = saturating_add(*f.saving_ns, saving);
    // The longest gap (gaps come longest first) says where.
    if (cause.count == 1) {
      cause.longest = length;
      cause.longest_text = (gap.before ? " after " + trace::short_kernel_name(gap.before->name()) : std::string()) +
                           (gap.after ? " until " + trace::short_kernel_name(gap.after->name()) : std::string());
      if (gap.after) locate(context, f, gap.after->correlation(), issue);
      f.while_compiling = compiling;
      if (gap.before) add_name(f, gap.before->name());
      if (gap.after) add_name(f, gap.after->name());
    }
    if (gap.before) add_row(context, f, gap.before->table(), gap.before->id());
    if (gap.after) add_row(context, f, gap.after->table(), gap.after->id());
  }
  for (auto& [key, cause] : causes) {
    Finding& f = cause.finding;
    std::vector<std::pair<int64_t, std::string>> ranked;
    for (auto& [name, entry] : cause.by_call) ranked.emplace_back(entry.first, name);
    std::sort(ranked.rbegin(), ranked.rend());
    std::string during;
    for (size_t i = 0; i < ranked.size() && i < 3; ++i) {
      during += (during.empty() ? "" : ", ") + format_ns(ranked[i].first) + " in " +
                ranked[i].second + " (" + std::to_string(cause.by_call[ranked[i].second].second) +
                " call(s))";
    }
    if (cause.outside > 0) {
      during += (during.empty() ? "" : ", ") + format_ns(cause.outside) + " outside CUDA calls";
    }
    int64_t device = std::get<1>(key);
    f.occurrences = cause.count;
    f.events = cause.count;
    f.what = cause.count == 1
                 ? "device " + std::to_string(device) + " idle for " + format_ns(f.cost_ns) +
                       cause.longest_text + "; the host issued it " + format_ns(cause.late) +
                       " after the GPU ran dry"
                 : "device " + std::to_string(device) + " idle " + std::to_string(cause.count) +
                       " times, " + format_ns(f.cost_ns) + " in all (the longest " +
                       format_ns(cause.longest) + cause.longest_text +
                       "); the host issued the next work " + format_ns(cause.late) +
                       " in all after the GPU ran dry";
    if (!during.empty()) f.what += ": " + during;
    findings.push_back(std::move(f));
  }
}

void gpu_low_utilization(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  // Where the program has steps, the step's findings say how busy it keeps
  // the GPU, and start-up is a finding of its own.
  if (facts.ops().startup_end_ns()) return;
  const auto& busy = facts.busy_by_device();
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
      f.nvtx = facts.ops().nvtx_at(std::nullopt, from);
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
  for (const Allocation& a : facts.ops().allocations()) {
    switch (a.kind()) {
      case AllocKind::Device:
      case AllocKind::Pool:
      case AllocKind::Managed:
      case AllocKind::PinnedHost:
      case AllocKind::WriteCombinedHost:
      case AllocKind::MappedHost:
      case AllocKind::RegisteredHost: break;
      default: continue;
    }
    groups[{static_cast<int>(a.kind()), a.bytes(), a.device().value_or(-1)}].push_back(&a);
  }
  auto call_ns = [&](std::optional<int64_t> correlation) {
    const HostCall* call = facts.ops().call(correlation);
    return call ? call->duration() : 0;
  };
  for (auto& [key, list] : groups) {
    std::stable_sort(list.begin(), list.end(), [](const Allocation* a, const Allocation* b) {
      return a->alloc_ns() < b->alloc_ns();
    });
    std::optional<int64_t> earliest_free;
    int64_t cycles = 0, now = 0;
    for (const Allocation* a : list) {
      if (earliest_free && *earliest_free <= a->alloc_ns()) ++cycles;
      if (a->free_ns()) earliest_free = std::min(earliest_free.value_or(*a->free_ns()), *a->free_ns());
      now = saturating_add(now, saturating_add(call_ns(a->alloc_correlation()), call_ns(a->free_correlation())));
    }
    if (cycles < context.limits.churn_cycles) continue;
    const Allocation& first = *list.front();
    Finding f;
    locate(context, f, first.alloc_correlation(), first.alloc_ns());
    // The compiler's where every one of them was (XLA's autotuner pins a few
    // bytes per trial on worker threads), whether or not the first one's
    // call is in the steps looked at.
    f.while_compiling = std::all_of(list.begin(), list.end(), [&](const Allocation* a) {
      return facts.compiling(a->process(), a->alloc_ns());
    });
    for (const Allocation* a : list) add_row(context, f, "allocations", a->id());
    bool pinned = first.kind() != AllocKind::Device && first.kind() != AllocKind::Pool &&
                  first.kind() != AllocKind::Managed;
    f.rule = "allocation_churn";
    f.what = std::to_string(list.size()) + " " + std::string(to_string(first.kind())) +
             " allocations of " + dvdg::format_bytes(first.bytes()) + ", " +
             std::to_string(cycles) + " of them made after an earlier one was freed";
    f.names.push_back(std::to_string(list.size()) + " x " + std::string(to_string(first.kind())) +
                      " " + dvdg::format_bytes(first.bytes()));
    f.cost_ns = now;
    set_saving(f, now,
               static_cast<double>(call_ns(first.alloc_correlation())) +
                   static_cast<double>(call_ns(first.free_correlation())),
               "one allocation and one free instead of " + std::to_string(list.size()));
    f.fix = pinned ? "pin the host buffer once and reuse it: page-locking and unlocking memory "
                     "costs far more than a copy"
            : first.kind() == AllocKind::Pool
                ? "keep the pool's memory between uses (cudaMemPoolSetAttribute "
                  "cudaMemPoolAttrReleaseThreshold) or allocate once outside the loop"
            : first.kind() == AllocKind::Managed
                ? "allocate the managed buffer once outside the loop and reuse it"
                : "allocate once outside the loop and reuse the buffer (or cudaMallocAsync / "
                  "cudaFreeAsync with a memory pool)";
    findings.push_back(std::move(f));
  }
}

}  // namespace apptracer::diagnose
