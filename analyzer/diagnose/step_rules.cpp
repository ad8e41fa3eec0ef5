// Rules about the program's step as a whole: a step (or, where the program
// has no steps, the run) bound by launching its work, and start-up, paid
// once before the steady steps. Their fixes are the framework's
// (analyzer/trace/framework.h).
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "analyzer/diagnose/rules.h"
#include "analyzer/model/median.h"
#include "analyzer/trace/by_kernel_name.h"

namespace apptracer::diagnose {

namespace {

using trace::Framework;

// The stretches a launch-bound finding is about, on one device: the steps
// (of the process launching on that device), else the device's whole span.
struct Span {
  int64_t process = 0;
  int64_t device = 0;
  int64_t start = 0, end = 0;
};

std::vector<Span> spans_of(const TraceFacts& facts,
                           const std::unordered_map<int64_t, Intervals>& busy) {
  std::map<int64_t, std::set<int64_t>> processes_by_device;
  for (const Kernel& k : facts.ops().kernels()) processes_by_device[k.row->device.value_or(0)].insert(k.row->process);
  std::vector<Span> spans;
  for (const auto& [device, intervals] : busy) {
    if (intervals.empty()) continue;
    const std::set<int64_t>& launching = processes_by_device[device];
    if (facts.ops().steps().empty()) {
      // The run: of its one launching process where it has one (0: several).
      spans.push_back({launching.size() == 1 ? *launching.begin() : 0, device, intervals.front().first,
                       intervals.back().second});
      continue;
    }
    for (const StepSpan& step : facts.ops().steps()) {
      if (launching.count(step.process)) spans.push_back({step.process, device, step.start_ns, step.end_ns});
    }
  }
  return spans;
}

// The GPU's idle time inside [from, to] in gaps between its work shorter
// than `max_gap`: the host launching the next work. A longer gap is the host
// doing something else (loading data, a synchronization), gpu_idle_gap's.
// A gap is measured whole, also where a span cuts it.
int64_t short_idle_ns(const Intervals& busy, int64_t from, int64_t to, int64_t max_gap) {
  auto first = std::lower_bound(busy.begin(), busy.end(), from,
                                [](const std::pair<int64_t, int64_t>& i, int64_t ns) { return i.second < ns; });
  int64_t idle = 0;
  // Before the span's first work: from the previous work's end, or the span's start.
  int64_t previous_end = first != busy.begin() ? std::prev(first)->second : from;
  for (auto i = first; i != busy.end() && previous_end < to; ++i) {
    int64_t gap = elapsed_ns(previous_end, i->first);
    if (gap > 0 && gap < max_gap)
      idle = saturating_add(idle, elapsed_ns(std::max(previous_end, from), std::min(i->first, to)));
    previous_end = std::max(previous_end, i->second);
  }
  // After the span's last work, when the span ends before any more.
  if (previous_end < to && elapsed_ns(previous_end, to) < max_gap && first != busy.end())
    idle = saturating_add(idle, elapsed_ns(std::max(previous_end, from), to));
  return idle;
}

struct KernelLaunches {
  int64_t launches = 0, gpu = 0, calls = 0, call_ns = 0;
};

// The part of a model a launch is charged to in a launch-bound finding: the
// outermost child of the model its module lies in ("layer1" for
// "layer1.0.conv1"), a scope whole ("Optimizer.step#SGD.step"), in its
// backward too ("training_step (train.py:18)": a module path is names and
// indexes between dots, a scope's name is not).
std::string_view model_part(std::string_view module, trace::ModulePhase phase) {
  bool path = phase != trace::ModulePhase::Scope && std::all_of(module.begin(), module.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
              });
  return path ? module.substr(0, module.find('.')) : module;
}

// "; most kernels from layer1 (31%), layer2 (24%), layer4 (20%)" where the
// trace says which module launched at least half of them, else "". The
// children of a container model (nn.Sequential's "0", "1", ...) count as
// one part, "layers 0-20": alone, each index is a few percent and says
// nothing of where in the model it is.
std::string most_launched_by(const std::map<std::string_view, int64_t>& by_part, int64_t attributed,
                             int64_t kernels) {
  if (attributed == 0 || 2 * attributed < kernels) return "";
  std::vector<std::pair<std::string, int64_t>> ranked;
  std::optional<int64_t> first_index, last_index;
  int64_t indexed = 0;
  for (const auto& [part, count] : by_part) {
    bool index = !part.empty() && part.size() < 10 &&
                 std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!index) {
      ranked.emplace_back(part, count);
      continue;
    }
    int64_t number = std::stoll(std::string(part));
    first_index = std::min(first_index.value_or(number), number);
    last_index = std::max(last_index.value_or(number), number);
    indexed += count;
  }
  if (indexed > 0) {
    ranked.emplace_back(*first_index == *last_index
                            ? "layer " + std::to_string(*first_index)
                            : "layers " + std::to_string(*first_index) + "-" + std::to_string(*last_index),
                        indexed);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text = "; most kernels from ";
  // The first always; the next two where they hold at least 1% (a function
  // jitted once beside the step is no part to look at).
  for (size_t i = 0; i < ranked.size() && i < 3; ++i) {
    int64_t percent = 100 * ranked[i].second / kernels;
    if (i > 0 && percent == 0) break;
    text += (i ? ", " : "") + ranked[i].first + " (" + std::to_string(percent) + "%)";
  }
  return text;
}

// How a launch-bound step's work is launched: the fix that fits it.
enum class StepLaunch { Kernels, Graphs, OneGraph };

std::string launch_bound_fix(Framework framework, StepLaunch launched, bool optimizer_fused) {
  // Each step one graph launch already (a JAX step jitted whole): the GPU
  // waits on the host between the steps, not inside them, and neither
  // jitting nor capturing more of the step is left to do.
  if (launched == StepLaunch::OneGraph) {
    switch (framework) {
      case Framework::Jax:
        return "each step is one graph launch already: the GPU waits on the host between steps (the "
               "Python loop, JAX's dispatch): run several steps per call (jax.lax.scan or fori_loop over "
               "a few batches inside the jitted function), or raise the batch size";
      case Framework::Pytorch:
        return "each step is one graph launch already: the GPU waits on the host between steps (the "
               "Python loop, data loading): take that work off the step's path, or raise the batch size";
      default:
        return "each step is one graph launch already: the GPU waits on the host between steps: launch "
               "several steps per graph, or give each step more work";
    }
  }
  if (launched == StepLaunch::Graphs) {
    switch (framework) {
      case Framework::Jax:
        return "XLA already launches this work as command buffers (CUDA graphs): jit more of the "
               "step into one function, or raise the batch size so that each launch does more work";
      case Framework::Pytorch:
        return "the step already runs as CUDA graphs: capture more of it per graph "
               "(torch.cuda.graphs), or raise the batch size so that each launch does more work";
      default:
        return "the work already runs as CUDA graphs: launch fewer, larger graphs, or give each "
               "node more work";
    }
  }
  switch (framework) {
    case Framework::Pytorch:
      return std::string("replay the step as a CUDA graph: torch.compile(model, mode=\"reduce-overhead\"), or "
                         "capture it with torch.cuda.graphs (torch.cuda.CUDAGraph, make_graphed_callables); ") +
             (optimizer_fused ? "use a larger batch" : "use fused optimizers (fused=True) and a larger batch");
    case Framework::Jax:
      return "jit the whole step into one function (XLA then launches it as command buffers), or "
             "raise the batch size";
    case Framework::Cupy:
      return "capture the loop in a CUDA graph (cupy.cuda.Stream.begin_capture) or fuse the "
             "elementwise work (cupy.fuse)";
    case Framework::Cpp: break;
  }
  return "capture the launch loop in a CUDA graph (cudaStreamBeginCapture, cudaGraphLaunch) or "
         "fuse the work into fewer, larger kernels";
}

// PyTorch's optimizer.zero_grad(set_to_none=False) launches a fill kernel
// per gradient, in its scope "Optimizer.zero_grad#SGD.zero_grad"; with
// set_to_none=True (the default since PyTorch 2.0) it launches none: the
// fix's last part where the step's kernels came from there, else "".
std::string zeroing_fix(const std::map<std::string_view, int64_t>& by_part, int64_t spans_count,
                        const std::string& per) {
  constexpr std::string_view kZeroGrad = "Optimizer.zero_grad#";
  int64_t zeroing = 0;
  for (const auto& [part, count] : by_part) {
    if (part.substr(0, kZeroGrad.size()) == kZeroGrad) zeroing += count;
  }
  if (zeroing == 0) return "";
  return "; and call optimizer.zero_grad(set_to_none=True) (the default): its " +
         std::to_string(zeroing / spans_count) + " kernels" + per + " that fill the gradients with zeros go";
}

std::string startup_fix(Framework framework) {
  switch (framework) {
    case Framework::Pytorch:
      return "paid once per run: keep lazy module loading (CUDA_MODULE_LOADING=LAZY, the default), "
             "keep torch.compile's caches between runs, and leave torch.backends.cudnn.benchmark "
             "off where input shapes change";
    case Framework::Jax:
      return "paid once per run: XLA compiles each jitted function per input shape: keep shapes "
             "fixed and turn on the persistent compilation cache (jax_compilation_cache_dir)";
    default:
      return "paid once per run: load modules lazily (CUDA_MODULE_LOADING=LAZY), create library "
             "handles and allocate once";
  }
}

// When a launch was issued: its call's start (its GPU start where the call
// was not recorded).
int64_t issued_ns(const Kernel& k) { return k.row->api_start_ns.value_or(k.row->gpu_start_ns.value_or(0)); }

// Steps' spans by their launcher (device and process) and start: which span
// a launch was issued in.
class SpansByLauncher {
 public:
  explicit SpansByLauncher(const std::vector<Span>& spans) : spans_(spans) {
    for (size_t i = 0; i < spans.size(); ++i) by_launcher_[{spans[i].device, spans[i].process}].push_back(i);
    for (auto& [launcher, list] : by_launcher_) {
      std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) { return spans[a].start < spans[b].start; });
    }
  }
  // The position in the spans of the one `k` was issued in; nullopt: none.
  std::optional<size_t> holding(const Kernel& k) const {
    auto found = by_launcher_.find({k.row->device.value_or(0), static_cast<int64_t>(k.row->process)});
    if (found == by_launcher_.end()) return std::nullopt;
    const std::vector<size_t>& list = found->second;
    int64_t issued = issued_ns(k);
    auto after = std::upper_bound(list.begin(), list.end(), issued,
                                  [&](int64_t ns, size_t i) { return ns < spans_[i].start; });
    if (after == list.begin() || issued >= spans_[*std::prev(after)].end) return std::nullopt;
    return *std::prev(after);
  }

 private:
  const std::vector<Span>& spans_;
  std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> by_launcher_;
};

// Marks where a kernel was not issued in a span (SpanOfKernels).
constexpr size_t kNoSpan = SIZE_MAX;

// A step that also ran other work (an evaluation every ten steps: twice the
// launches of the others) is not the step a graph would replay, and its
// host time between launches is that work's: where such steps are under a
// quarter of the steps, their spans are marked left out (by step, as a step
// may span devices). `span_of`: each kernel's span, in the kernels' order.
// Returns how many steps.
size_t leave_out_other_work(const TraceFacts& facts, const std::vector<Span>& spans,
                            const std::vector<size_t>& span_of, std::vector<bool>& left_out) {
  if (facts.ops().steps().empty() || spans.empty()) return 0;
  std::vector<int64_t> launches(spans.size(), 0);
  for (size_t span : span_of) {
    if (span != kNoSpan) ++launches[span];
  }
  int64_t median = model::middle_value(launches);
  std::set<std::pair<int64_t, int64_t>> other;  // by (process, start)
  for (size_t i = 0; i < spans.size(); ++i) {
    if (2 * launches[i] > 3 * median) other.insert({spans[i].process, spans[i].start});
  }
  std::set<std::pair<int64_t, int64_t>> all;
  for (const Span& span : spans) all.insert({span.process, span.start});
  if (other.empty() || 4 * other.size() >= all.size()) return 0;
  for (size_t i = 0; i < spans.size(); ++i) left_out[i] = other.count({spans[i].process, spans[i].start}) > 0;
  return other.size();
}

// The launch-bound estimate's account of what tracing added, taken from the
// traced step: what links and the trace's own timing measured.
std::string traced_step_estimate(model::TracingLevel level, int64_t per_launch_ns, bool split,
                                 int64_t callbacks_per_step, int64_t hooks_per_step, const std::string& per,
                                 const std::string& noun) {
  return (per_launch_ns > 0 ? "; less " + format_ns(per_launch_ns) + " per launch that " +
                                  (split ? "CUPTI's dispatch" : "tracing") + " at level " + model::to_string(level) +
                                  " added (measured by apptracer links)"
                            : std::string()) +
         (callbacks_per_step > 0 ? "; less " + format_ns(callbacks_per_step) + per +
                                       " that the tracer's own CUDA callbacks took in the calls (tracer_time)"
                                 : std::string()) +
         (hooks_per_step > 0 ? "; less " + format_ns(hooks_per_step) + per +
                                   " that the tracer's own hooks took between launches (allocator events, op and "
                                   "module ranges: tracer_time)"
                             : std::string()) +
         // Measured on PyTorch twins (bench/RESULTS.md): the graph replay's
         // time holds within a few percent; the saving, taken from the
         // traced step less what links and tracer_time measure, ran 0-50%
         // over the untraced one: tracing also slows the program's own code.
         "; the saving is from the traced " + noun + ", which tracing lengthens beyond that: against the untraced " +
         noun + " it is that time less the graph replay's (--untraced-step MS prices it so)";
}

// The same, where the user measured the untraced step (--untraced-step).
std::string untraced_step_estimate(int64_t untraced_step_ns, int64_t added_per_step, double short_gaps_share) {
  std::string step = "; against the untraced step of " + format_ns(untraced_step_ns) + " (--untraced-step): ";
  std::string share = short_gaps_share < 0.995
                          ? " (the short gaps' " + std::to_string(static_cast<int>(100 * short_gaps_share + 0.5)) +
                                "% of the GPU's idle time)"
                          : "";
  if (added_per_step < 0)
    return step + "plus the " + format_ns(-added_per_step) + " per step it took longer untraced" + share;
  return step + "less the " + format_ns(added_per_step) + " per step that tracing added to it" + share;
}

bool loads_modules(std::string_view name) {
  return name.find("Module") != std::string_view::npos || name.find("Library") != std::string_view::npos;
}

}  // namespace

void launch_bound_kernels(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  const auto& busy = facts.busy_by_device();
  std::vector<Span> spans = spans_of(facts, busy);
  const trace::CompilerTime& compiler = facts.compiler_time();
  auto recompiled = [&](const Span& span) { return facts.compiled_ns(span.process, span.start, span.end) > 0; };
  // A step in which XLA compiled a new input shape also holds the host's
  // tracing and lowering of it, outside the compiler's ranges (jax_train: 2 s
  // in 3 steps of 40 that take 0.5 ms): the steps that did not recompile are
  // the step, where there are some.
  std::set<std::pair<int64_t, int64_t>> recompiling;  // by (process, start): a step may span devices
  std::vector<Span> steady;
  for (const Span& span : spans) {
    if (recompiled(span)) {
      recompiling.insert({span.process, span.start});
    } else {
      steady.push_back(span);
    }
  }
  if (steady.empty()) {
    recompiling.clear();
  } else {
    spans = std::move(steady);
  }
  // Each kernel's span, looked up once: for the steps' launch counts and
  // for the kernels of the step (without steps: every launch on the device).
  std::vector<size_t> span_of;
  if (!facts.ops().steps().empty()) {
    span_of.reserve(facts.ops().kernels().size());
    SpansByLauncher index(spans);
    for (const Kernel& k : facts.ops().kernels()) span_of.push_back(index.holding(k).value_or(kNoSpan));
  }
  std::vector<bool> other_work_span(spans.size(), false);
  size_t other_work = leave_out_other_work(facts, spans, span_of, other_work_span);
  int64_t wall = 0, busy_ns = 0, idle = 0;
  // The tracer's hooks between the launches and its callbacks in them,
  // which the GPU waited for too.
  int64_t tracer_between = 0, tracer_in_calls = 0;
  size_t kept_spans = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    if (other_work_span[i]) continue;
    ++kept_spans;
    const Span& span = spans[i];
    const Intervals& intervals = facts.busy_on(span.device);
    // Less the time XLA compiled a new shape in it, and what the GPU did then
    // (its trial kernels, the waits between them): the compiler's, not the step's.
    auto process = static_cast<trace::ProcessId>(span.process);
    auto idle_in = [&](int64_t from, int64_t to) {
      return short_idle_ns(intervals, from, to, context.limits.min_gap_ns);
    };
    auto busy_in = [&](int64_t from, int64_t to) { return covered_ns(intervals, from, to); };
    wall = saturating_add(wall, elapsed_ns(span.start, span.end) - compiler.covered(process, span.start, span.end));
    busy_ns = saturating_add(busy_ns, busy_in(span.start, span.end) - compiler.sum_within(process, span.start, span.end, busy_in));
    idle = saturating_add(idle, idle_in(span.start, span.end) - compiler.sum_within(process, span.start, span.end, idle_in));
    tracer_between = saturating_add(tracer_between, facts.tracer_time.between_calls_ns(process, span.start, span.end));
    tracer_in_calls = saturating_add(tracer_in_calls, facts.tracer_time.in_calls_ns(process, span.start, span.end));
  }
  if (kept_spans == 0) return;
  auto issued_inside = [&](const Kernel& k, size_t kernel) {
    // Without steps, the run: every launch on the device.
    if (facts.ops().steps().empty()) return busy.count(k.row->device.value_or(0)) > 0;
    return span_of[kernel] != kNoSpan && !other_work_span[span_of[kernel]];
  };
  // The kernels issued in the spans, by name; a graph launch counts once.
  trace::ByKernelName<KernelLaunches> by_name;
  // Kernels by the part of the model that launched them, where the trace knows it.
  std::map<std::string_view, int64_t> by_part;
  int64_t attributed = 0;
  std::set<int64_t> graph_launches;
  int64_t launches = 0, graph_kernels = 0, short_kernels = 0;
  Finding f;
  size_t kernel = 0;
  for (const Kernel& k : facts.ops().kernels()) {
    const auto& row = *k.row;
    int64_t issued = issued_ns(k);
    // A compiler's trial launches (XLA autotuning a new shape) are not the step's.
    if (!issued_inside(k, kernel++) || facts.compiling(row.process, issued)) continue;
    KernelLaunches& entry = by_name[k.name];
    ++entry.launches;
    trace::FrameworkContext launched_by = facts.ops().framework_context(k);
    std::string_view module = launched_by.module_id ? facts.ops().string(launched_by.module_id, "") : "";
    if (!module.empty()) {
      ++by_part[model_part(module, launched_by.phase)];
      ++attributed;
    }
    entry.gpu = saturating_add(entry.gpu, k.gpu_ns());
    if (k.gpu_ns() < context.limits.short_kernel_ns) ++short_kernels;
    if (row.launch_kind == LaunchKind::Graph) {
      ++graph_kernels;
      if (row.call_correlation_id && graph_launches.insert(*row.call_correlation_id).second) ++launches;
      continue;
    }
    ++launches;
    if (const HostCall* call = facts.ops().call(row.call_correlation_id)) {
      ++entry.calls;
      entry.call_ns = saturating_add(entry.call_ns, call->duration());
    }
    if (f.rows.empty()) {
      locate(context, f, row.call_correlation_id, issued);
      // About the whole step's launches: its text names the modules most came
      // from; the first launch's module, op and NVTX range (XLA names one per
      // thunk) would mislead.
      f.framework.clear();
      f.nvtx.clear();
    }
    add_row(context, f, "kernels", row.id);
  }
  int64_t kernels = 0;
  for (const auto& [name, entry] : by_name) kernels += entry.launches;
  bool in_graphs = 2 * graph_kernels > kernels;
  int64_t nodes = kernels - graph_kernels;
  // A node's price: measured by `apptracer links` where the system file has
  // it (whatif --graphs replays with the same), else assumed and said so.
  const model::GraphLaunch* measured = context.cost.graph_launch();
  int64_t node_ns = measured ? saturating_round(measured->node_ns) : context.limits.graph_node_ns;
  int64_t graph_cost = clamp_to_int64(static_cast<__int128>(nodes) * node_ns);
  // What tracing added to each launch, measured by `apptracer links`: the
  // GPU waited that much longer than it will untraced (whatif --graphs
  // takes the same off, model/tracing_cost.h).
  // Where links split off the tracer's callbacks, only CUPTI's part per
  // launch, and the callbacks as this trace measured them (tracing_cost.h).
  const model::TracingCost* tracing = context.cost.tracing_cost();
  bool split = tracing && tracing->callbacks_measured() && facts.tracer_time.measures_callbacks();
  if (!split) tracer_in_calls = 0;
  int64_t tracing_ns = !tracing ? 0
                       : split  ? saturating_round(tracing->cupti_added_ns(facts.tracing_level))
                                : saturating_round(tracing->added_ns(facts.tracing_level));
  // What tracing added to the GPU's short idle time: what links and
  // tracer_time measured; or, where the user gave the untraced step, all
  // tracing added (the traced steps' time less it), the short gaps' share of
  // it (the rest fell in the long gaps, the host loading data:
  // gpu_idle_gap's).
  int64_t spans_count = facts.ops().steps().empty() ? 1 : static_cast<int64_t>(kept_spans);
  std::optional<int64_t> tracing_added;
  double short_gaps_share = 1;
  int64_t tracing_in_idle = saturating_add(clamp_to_int64(static_cast<__int128>(nodes) * tracing_ns),
                                           saturating_add(tracer_between, tracer_in_calls));
  if (context.untraced_step_ns && !facts.ops().steps().empty()) {
    tracing_added =
        saturating_sub(wall, clamp_to_int64(static_cast<__int128>(*context.untraced_step_ns) * spans_count));
    short_gaps_share = static_cast<double>(idle) /
                       static_cast<double>(std::max<int64_t>({saturating_sub(wall, busy_ns), idle, 1}));
    tracing_in_idle = saturating_round(short_gaps_share * static_cast<double>(*tracing_added));
  }
  int64_t untraced_idle = std::max<int64_t>(0, saturating_sub(idle, tracing_in_idle));
  int64_t graph_saving = std::max<int64_t>(0, saturating_sub(untraced_idle, graph_cost));
  // Launch-bound: the GPU waits on launches longer than it works; or, its
  // kernels mostly short and not launched by graphs yet, a graph would take a
  // share of the step worth acting on. (A PyTorch step busy 73% untraced, its launches' waits the
  // rest, ran 25% faster replayed as a graph: bench/RESULTS.md.)
  bool mostly_short = 2 * short_kernels > kernels;
  bool worth_a_graph = !in_graphs && mostly_short && static_cast<double>(graph_saving) >=
                                           context.limits.min_graph_saving_share * static_cast<double>(wall);
  if (launches < context.limits.short_kernel_count || idle < context.limits.min_cost_ns ||
      (static_cast<double>(busy_ns) >= context.limits.low_utilization * static_cast<double>(busy_ns + idle) &&
       !worth_a_graph))
    return;
  // Averages per step (per step and device where a process uses several).
  std::string noun = facts.ops().steps().empty() ? "run" : "step";
  std::string unit = "the " + noun;
  std::string per = facts.ops().steps().empty() ? "" : " per step";
  int busy_percent = static_cast<int>(100.0 * static_cast<double>(busy_ns) /
                                      static_cast<double>(std::max<int64_t>(wall, 1)));
  std::string left_out;
  if (!recompiling.empty())
    left_out += "; " + std::to_string(recompiling.size()) + " in which XLA compiled a new shape left out";
  if (other_work > 0)
    left_out += "; " + std::to_string(other_work) +
                " that also ran other work (over 1.5x the launches of the median step, as an evaluation) left out";
  f.rule = "launch_bound_kernels";
  f.what = unit + " is launch-bound: GPU busy " + std::to_string(busy_percent) + "% of " +
           format_ns(wall / spans_count) + per + "; " + std::to_string(launches / spans_count) +
           (!in_graphs ? " launches" : launches / spans_count == 1 ? " graph launch" : " graph and kernel launches") + per +
           " from the host, one every " + format_ns(wall / std::max<int64_t>(launches, 1)) +
           ", and the GPU waits " + format_ns(idle / spans_count) + per + " between them" +
           // Means, so that the step's numbers add up to the totals saved;
           // the report's step cards show medians beside them.
           (facts.ops().steps().empty() ? "" : " (means of the steps" + left_out + ")");
  f.what += most_launched_by(by_part, attributed, kernels);
  f.cost_ns = idle;
  if (in_graphs) {
    f.estimate = "the work is launched as graphs already: what a larger batch or a larger graph "
                 "saves depends on how the step's work scales, which one trace cannot tell";
  } else {
    f.saving_ns = graph_saving;
    f.estimate = "the GPU's idle time between launches (gaps under " +
                 format_ns(context.limits.min_gap_ns) + "; longer ones are gpu_idle_gap's), less " +
                 format_ns(node_ns) + " per kernel for launching it as a graph node (" +
                 (measured ? std::string("measured by apptracer links") : std::string("assumed: the system file "
                             "of apptracer links measures it")) +
                 "): replayed as a CUDA graph, " + unit + " takes its GPU time plus that, " +
                 format_ns(saturating_add(busy_ns, graph_cost) / spans_count) + per +
                 " (whatif --graphs replays it)" +
                 (tracing_added ? untraced_step_estimate(*context.untraced_step_ns, *tracing_added / spans_count,
                                                         short_gaps_share)
                                : traced_step_estimate(facts.tracing_level, tracing_ns, split,
                                                       tracer_in_calls / spans_count, tracer_between / spans_count,
                                                       per, noun));
  }
  f.claim = "GPU idle time";
  f.steps = facts.step_count() - static_cast<int64_t>(recompiling.size() + other_work);
  bool one_graph_per_step = in_graphs && !facts.ops().steps().empty() && launches <= spans_count;
  f.fix = launch_bound_fix(facts.framework,
                           one_graph_per_step ? StepLaunch::OneGraph
                           : in_graphs        ? StepLaunch::Graphs
                                              : StepLaunch::Kernels,
                           facts.framework == Framework::Pytorch && facts.optimizer_fused());
  if (facts.framework == Framework::Pytorch && !in_graphs) f.fix += zeroing_fix(by_part, spans_count, per);
  // Its kernels, the most launched first.
  std::vector<std::pair<std::string_view, KernelLaunches>> ranked(by_name.begin(), by_name.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second.launches > b.second.launches; });
  f.details = {"kernels",
               {"kernel", facts.ops().steps().empty() ? "launches" : "launches per step", "gpu_ns_each",
                "launch_call_ns_each"},
               {}};
  for (size_t i = 0; i < ranked.size() && i < 10; ++i) {
    const KernelLaunches& e = ranked[i].second;
    f.details.rows.push_back({std::string(ranked[i].first), e.launches / spans_count, e.gpu / e.launches,
                              e.calls ? Cell(e.call_ns / e.calls) : Cell()});
    if (i < 3) add_name(f, ranked[i].first);
  }
  findings.push_back(std::move(f));
}

void startup(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  for (const StartUp& s : facts.ops().startups()) {
    int64_t length = elapsed_ns(s.start_ns, s.end_ns);
    if (length < context.limits.min_cost_ns) continue;
    // The host's calls in it, by name (module loading together), and the time outside any.
    std::map<std::string, int64_t> by_call;
    int64_t module_calls = 0;
    Intervals in_calls;
    for (const HostCall& c : facts.ops().calls()) {
      if (c.start_ns() >= s.end_ns) break;
      int64_t a = std::max(c.start_ns(), s.start_ns), b = std::min(c.end_ns(), s.end_ns);
      if (b <= a) continue;
      bool module = loads_modules(c.name);
      module_calls += module;
      int64_t& total = by_call[module ? std::string("module loading") : std::string(c.name)];
      total = saturating_add(total, elapsed_ns(a, b));
      in_calls.emplace_back(a, b);
    }
    merge_intervals(in_calls);
    int64_t outside = length - covered_ns(in_calls, s.start_ns, s.end_ns);
    std::vector<std::pair<int64_t, std::string>> parts;
    for (const auto& [name, ns] : by_call) {
      parts.emplace_back(ns, format_ns(ns) + (name == "module loading"
                                                  ? " loading modules (" + std::to_string(module_calls) + " calls)"
                                                  : " in " + name));
    }
    // The longest top-level NVTX ranges in it (XLA compiling, a framework's set-up).
    for (const NvtxRange& r : facts.ops().nvtx()) {
      if (r.depth() != 0 || r.start_ns() < s.start_ns || r.start_ns() >= s.end_ns) continue;
      int64_t ns = elapsed_ns(r.start_ns(), std::min(r.end_ns(), s.end_ns));
      parts.emplace_back(ns, format_ns(ns) + " in NVTX range " + std::string(r.name));
    }
    if (outside > 0) parts.emplace_back(outside, format_ns(outside) + " outside CUDA calls");
    std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string during;
    for (size_t i = 0; i < parts.size() && i < 4; ++i) during += (i ? ", " : "") + parts[i].second;
    // From the work in start-up alone: every device's busy intervals over
    // the whole run (19 MB at a million kernels) would be made for this
    // rule only, and held through the whole run's other rules.
    int64_t gpu = 0;
    for (const auto& [device, intervals] : facts.busy_within(s.start_ns, s.end_ns))
      gpu = std::max(gpu, covered_ns(intervals, s.start_ns, s.end_ns));
    Finding f;
    f.rule = "startup";
    f.what = "start-up took " + format_ns(length) + " before the first steady step (step " +
             std::to_string(s.first_steady) + ", steps from " + s.steps_from + ")" +
             (facts.ops().startups().size() > 1 ? " in process " + std::to_string(s.process) : "") +
             (during.empty() ? "" : ": " + during) + "; GPU busy " +
             std::to_string(static_cast<int>(100.0 * static_cast<double>(gpu) / static_cast<double>(length))) + "%";
    f.names.push_back("start-up");
    f.cost_ns = length;
    f.startup = true;
    f.estimate = "paid once per run, before the steady steps: not priced against them";
    f.fix = startup_fix(facts.framework);
    findings.push_back(std::move(f));
  }
}

}  // namespace apptracer::diagnose
