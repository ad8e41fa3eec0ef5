// The ops of a sampled trace's launches from other steps (framework_context.h
// says when and why). A launch's place is (process, thread, its count among
// the kernel launches its thread issued in its steady step before it, its
// kernel); what was recorded at a place in any step names the launches there
// whose own op or module was not. The kernel is part of the place: a step
// that took another path (an extra launch early on shifts the rest) names
// its launches only where the same kernel ran at the same place in another
// step, and leaves the other steps' places as they were.
// What steps leave unnamed (work that runs in few steps, as an evaluation
// every few steps, or outside the steady steps) is named from other calls
// of the module or scope around it: a launch's place there is (thread, that
// range's name, its count among the launches since the range began, its
// kernel), the same in every call of a module that runs the same work.
#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <tuple>
#include <vector>

#include "analyzer/trace/framework_context.h"
#include "analyzer/trace/steps.h"
#include "analyzer/trace/trace.h"

namespace apptracer::trace {

constexpr uint32_t kNoStep = UINT32_MAX;
// A launch whose own op was recorded, which names others from other calls;
// one left without an op, which others may name; one its steps named, which
// takes no part.
constexpr uint32_t kTeaches = UINT32_MAX - 1;
constexpr uint32_t kLearns = UINT32_MAX;
constexpr uint32_t kNamedByItsSteps = UINT32_MAX - 2;

// A kernel launch of a sampled trace, by its call (calls_): what its
// fill from other steps and calls sorts and numbers.
struct PlacedLaunch {
  int64_t start_ns;
  int64_t kernel_id;  // kernels.id: a graph launch's kernels share its call
  int64_t kernel_name_id;
  uint32_t thread;
  uint32_t step;  // its steady step; kNoStep: none
  uint32_t call;
  // Launches before it on its thread in its step, then its place (kNoStep:
  // none); then what its fill from other calls makes of it (kTeaches, kLearns,
  // kNamedByItsSteps).
  uint32_t place = 0;
};

namespace {

// (thread, launches before it, kernel name id)
using LaunchPlace = std::tuple<uint32_t, uint32_t, int64_t>;
// (thread, the name of the module or scope around it, whether a scope,
// launches before it since that range began, kernel name id)
using RangePlace = std::tuple<uint32_t, int64_t, bool, uint32_t, int64_t>;

// An op still open at the end of the trace lasts forever.
int64_t op_duration(const FrameworkContext& context) {
  return context.op_end_ns == INT64_MAX ? INT64_MAX : context.op_end_ns - context.op_start_ns;
}

int64_t shifted(int64_t ns, int64_t by) { return ns == INT64_MAX ? INT64_MAX : ns + by; }

// A forward op that made an autograd node, in a steady step.
struct ForwardOp {
  ProcessId process;
  int64_t module_id;
  int64_t op_name_id;
  int64_t step;
  int64_t seq;
};

// Each process's count of sequence numbers a steady step uses: the most
// common step-to-step difference between records of the same op in the
// same module; 0 where none repeats. `ops` sorted by process, module, op, seq.
std::map<ProcessId, int64_t> step_periods(const std::vector<ForwardOp>& ops) {
  std::map<std::pair<ProcessId, int64_t>, size_t> votes;
  for (size_t i = 1; i < ops.size(); ++i) {
    const ForwardOp& a = ops[i - 1];
    const ForwardOp& b = ops[i];
    if (std::tie(a.process, a.module_id, a.op_name_id) != std::tie(b.process, b.module_id, b.op_name_id))
      continue;
    int64_t steps_apart = b.step - a.step;
    int64_t numbers_apart = b.seq - a.seq;
    if (steps_apart > 0 && numbers_apart > 0 && numbers_apart % steps_apart == 0)
      ++votes[{a.process, numbers_apart / steps_apart}];
  }
  std::map<ProcessId, int64_t> periods;
  std::map<ProcessId, size_t> best;
  for (const auto& [key, count] : votes) {
    if (count > best[key.first]) {
      best[key.first] = count;
      periods[key.first] = key.second;
    }
  }
  return periods;
}

// The op an autograd node's type names, as torch's op names spell it:
// "NativeLayerNormBackward0" -> "native_layer_norm", "ToCopyBackward0" ->
// "to_copy"; "" for a name of another form.
std::string op_of_node_name(std::string_view node) {
  size_t backward = node.rfind("Backward");
  if (backward == std::string_view::npos || backward == 0) return "";
  std::string op;
  for (size_t i = 0; i < backward; ++i) {
    char c = node[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (i > 0) op += '_';
      op += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      op += c;
    }
  }
  return op;
}

// An op's name as a node's type names it: "aten::_to_copy" -> "to_copy".
std::string_view bare_op_name(std::string_view op) {
  if (size_t colons = op.rfind("::"); colons != std::string_view::npos) op.remove_prefix(colons + 2);
  while (!op.empty() && op.front() == '_') op.remove_prefix(1);
  return op;
}

// The module whose op made a node at a place: the one module claiming it;
// where two do, the one whose op the node's type names (exactly, else as
// its start: NllLossBackward0 by aten::nll_loss_forward); 0 where that does
// not settle it.
int64_t module_making(const std::vector<std::pair<int64_t, int64_t>>& made, const std::string& node_op, Trace& trace) {
  auto one_module = [](const std::vector<int64_t>& modules) {
    for (int64_t module : modules) {
      if (module != modules.front()) return int64_t{0};
    }
    return modules.empty() ? int64_t{0} : modules.front();
  };
  std::vector<int64_t> all, exact, starting;
  for (const auto& [module, op] : made) {
    all.push_back(module);
    if (node_op.empty()) continue;
    std::string_view name = bare_op_name(trace.string(op));
    if (name == node_op) exact.push_back(module);
    else if (name.substr(0, node_op.size()) == node_op) starting.push_back(module);
  }
  if (int64_t module = one_module(all)) return module;
  if (!exact.empty()) return one_module(exact);
  return one_module(starting);
}

}  // namespace

void FrameworkContexts::link_nodes_by_step_period(Trace& trace) {
  const TraceSteps& steps = trace.steps();
  std::vector<ForwardOp> ops;
  for (const Thread& ranges : threads_) {
    const ProcessSteps* process_steps = steps.find(ranges.process);
    if (!process_steps) continue;
    for (const Range& op : ranges.ops) {
      if (op.seq < 0) continue;
      const Range* module = made_in(ranges, op.start_ns);
      std::optional<size_t> step = process_steps->steady_step_at(op.start_ns);
      if (!module || !step) continue;
      ops.push_back({ranges.process, module->name_id, op.name_id, static_cast<int64_t>(*step), op.seq});
    }
  }
  std::sort(ops.begin(), ops.end(), [](const ForwardOp& a, const ForwardOp& b) {
    return std::tie(a.process, a.module_id, a.op_name_id, a.seq) <
           std::tie(b.process, b.module_id, b.op_name_id, b.seq);
  });
  std::map<ProcessId, int64_t> periods = step_periods(ops);
  // What each number modulo the period was made by: the op and its module,
  // in some step. Ops that make no node carry the number of the next node
  // made, so a number can hold ops of two modules (the last op of one and
  // the node-making op of the next).
  std::map<std::pair<ProcessId, int64_t>, std::vector<std::pair<int64_t, int64_t>>> made_at_place;
  for (const ForwardOp& op : ops) {
    auto period = periods.find(op.process);
    if (period == periods.end()) continue;
    std::vector<std::pair<int64_t, int64_t>>& made = made_at_place[{op.process, op.seq % period->second}];
    std::pair<int64_t, int64_t> claim{op.module_id, op.op_name_id};
    if (std::find(made.begin(), made.end(), claim) == made.end()) made.push_back(claim);
  }
  std::unordered_map<int64_t, std::string> made_by_names;  // node name id -> the op it names
  for (const Thread& ranges : threads_) {
    auto period = periods.find(ranges.process);
    if (period == periods.end()) continue;
    for (const Range& node : ranges.backward) {
      if (node.seq < 0 || module_of_node_.count(node_key(ranges.process, node.seq))) continue;
      auto place = made_at_place.find({ranges.process, node.seq % period->second});
      if (place == made_at_place.end()) continue;
      auto named = made_by_names.try_emplace(node.name_id);
      if (named.second) named.first->second = op_of_node_name(trace.string(node.name_id));
      int64_t module = module_making(place->second, named.first->second, trace);
      if (module != 0) module_of_node_[node_key(ranges.process, node.seq)] = module;
    }
  }
}

void FrameworkContexts::fill_from_other_steps(Trace& trace) {
  const TraceSteps& steps = trace.steps();
  // Grown once: a million launches, doubling, held twice their bytes.
  std::vector<PlacedLaunch> launches;
  launches.reserve(static_cast<size_t>(std::max<int64_t>(0, trace.row_count(KernelRow::kTable))));
  trace.each_row<KernelRow>({"id", "call_correlation_id", "name_id"}, [&](const Packed<KernelRow>& kernel) {
    if (!kernel.call_correlation_id || !kernel.name_id) return;
    const Call* call = find_call(kernel.process, *kernel.call_correlation_id);
    if (!call) return;
    const ProcessSteps* process_steps = steps.find(kernel.process);
    std::optional<size_t> step = process_steps ? process_steps->steady_step_at(call->start_ns) : std::nullopt;
    launches.push_back({call->start_ns, kernel.id, *kernel.name_id, call->thread,
                        step ? static_cast<uint32_t>(*step) : kNoStep, static_cast<uint32_t>(call - calls_.data())});
  });
  // Threads are by process and tid: launches by process, thread and start
  // (a thread's steps follow one another, each one stretch of its launches).
  std::sort(launches.begin(), launches.end(), [](const PlacedLaunch& a, const PlacedLaunch& b) {
    return std::tie(a.thread, a.start_ns, a.kernel_id) < std::tie(b.thread, b.start_ns, b.kernel_id);
  });
  for (size_t i = 0; i < launches.size(); ++i) {
    PlacedLaunch& launch = launches[i];
    bool same_step = i > 0 && std::tie(launches[i - 1].thread, launches[i - 1].step) ==
                                  std::tie(launch.thread, launch.step);
    launch.place = launch.step == kNoStep ? kNoStep : same_step ? launches[i - 1].place + 1 : 0;
  }

  std::map<LaunchPlace, uint32_t> numbered;
  for (PlacedLaunch& launch : launches) {
    if (launch.step == kNoStep) continue;
    auto [number, added] = numbered.try_emplace({launch.thread, launch.place, launch.kernel_name_id},
                                                static_cast<uint32_t>(places_.size()));
    if (added) places_.emplace_back();
    launch.place = number->second;
    Place& place = places_[launch.place];
    FrameworkContext own = recorded_at(threads_[launch.thread], launch.start_ns);
    // Where one step recorded an outer op (aten::linear) and another the op
    // inside it (aten::addmm), the inner one launched it: ops nest, so the
    // shorter.
    take_inner_op(own, launch.start_ns, place);
    if (own.phase != ModulePhase::None && place.module.phase == ModulePhase::None) place.module = own;
    place.in_node = place.in_node || innermost(threads_[launch.thread].backward, launch.start_ns);
  }
  // Autograd's engine works between nodes too: it sums a gradient down to
  // the shape of a broadcast input, casts it back to its input's type, and
  // adds up the gradients flowing into one input (a residual's) after the
  // node that made them returns, outside every node's range. Such a launch,
  // never inside a node in any step, belongs to the backward of the module
  // whose node ran just before it on its thread (a transformer's steps had
  // one launch in seven there). In order, so a run of them takes it too. A
  // launch some step saw inside a node is that node's, named or not.
  for (size_t i = 1; i < launches.size(); ++i) {
    const PlacedLaunch& before = launches[i - 1];
    const PlacedLaunch& launch = launches[i];
    if (launch.step == kNoStep || std::tie(before.thread, before.step) != std::tie(launch.thread, launch.step))
      continue;
    Place& place = places_[launch.place];
    const Place& previous = places_[before.place];
    if (!place.in_node && place.module.phase == ModulePhase::None && previous.module.phase == ModulePhase::Backward)
      place.module = previous.module;
  }

  // Each launch's own context is looked up again rather than kept from the
  // pass above: a million launches' contexts would be 40 MB more at the
  // peak. A call keeps the first place that completes it; a lookup
  // completes its context again from there.
  // Then a launch's place says whether its own op was recorded or it is left
  // without one: the fill from other calls looks only at those.
  for (PlacedLaunch& launch : launches) {
    FrameworkContext context = recorded_at(threads_[launch.thread], launch.start_ns);
    bool recorded_op = context.op_id != 0;
    if (launch.step != kNoStep && complete(places_[launch.place], launch.start_ns, context)) {
      ++from_other_steps_;
      Call& call = calls_[launch.call];
      if (call.place == kNone) {
        call.place = launch.place;
        placed_calls_.push_back(launch.call);
      }
    }
    launch.place = recorded_op ? kTeaches : context.op_id == 0 ? kLearns : kNamedByItsSteps;
  }
  // Launches are by thread and start, so the calls placed so far are too;
  // the few placed from other calls are put among them.
  size_t from_steps = placed_calls_.size();
  fill_from_other_calls(launches);
  auto by_thread_and_start = [&](uint32_t a, uint32_t b) {
    return std::tie(calls_[a].thread, calls_[a].start_ns) < std::tie(calls_[b].thread, calls_[b].start_ns);
  };
  auto tail = placed_calls_.begin() + static_cast<std::ptrdiff_t>(from_steps);
  std::sort(tail, placed_calls_.end(), by_thread_and_start);
  std::inplace_merge(placed_calls_.begin(), tail, placed_calls_.end(), by_thread_and_start);
  placed_calls_.shrink_to_fit();
}

void FrameworkContexts::take_inner_op(const FrameworkContext& own, int64_t start_ns, Place& place) {
  if (own.op_id == 0 || (place.op.op_id != 0 && op_duration(own) >= op_duration(place.op))) return;
  place.op = own;
  place.op_starts_after_ns = own.op_start_ns - start_ns;
  place.op_ends_after_ns = shifted(own.op_end_ns, -start_ns);
}

void FrameworkContexts::fill_from_other_calls(std::vector<PlacedLaunch>& launches) {
  // A launch's place in the module (forward) or scope around it; none
  // outside both. Launches are by thread and start: those since the range
  // began are found by its start.
  auto range_place = [&](size_t i) -> std::optional<RangePlace> {
    const PlacedLaunch& launch = launches[i];
    const Thread& ranges = threads_[launch.thread];
    const Range* module = innermost(ranges.modules, launch.start_ns);
    const Range* around = module ? module : innermost(ranges.scopes, launch.start_ns);
    if (!around) return std::nullopt;
    auto first = std::lower_bound(launches.begin(), launches.begin() + static_cast<std::ptrdiff_t>(i),
                                  std::make_pair(launch.thread, around->start_ns),
                                  [](const PlacedLaunch& l, const std::pair<uint32_t, int64_t>& key) {
                                    return std::make_pair(l.thread, l.start_ns) < key;
                                  });
    auto before = static_cast<uint32_t>(launches.begin() + static_cast<std::ptrdiff_t>(i) - first);
    return RangePlace{launch.thread, around->name_id, module == nullptr, before, launch.kernel_name_id};
  };
  // What any call recorded at each place: only launches with a recorded op
  // teach, only those left without one learn (few of a million).
  std::map<RangePlace, Place> taught;
  for (size_t i = 0; i < launches.size(); ++i) {
    if (launches[i].place != kTeaches) continue;
    FrameworkContext own = recorded_at(threads_[launches[i].thread], launches[i].start_ns);
    if (std::optional<RangePlace> key = range_place(i)) take_inner_op(own, launches[i].start_ns, taught[*key]);
  }
  if (taught.empty()) return;
  // A call whose step named its module but not its op keeps both: one place
  // made of the two, per pair.
  std::map<std::pair<uint32_t, const Place*>, uint32_t> joined;
  for (size_t i = 0; i < launches.size(); ++i) {
    if (launches[i].place != kLearns) continue;
    std::optional<RangePlace> key = range_place(i);
    auto found = key ? taught.find(*key) : taught.end();
    if (found == taught.end()) continue;
    ++from_other_calls_;
    Call& call = calls_[launches[i].call];
    if (call.place != kNone && places_[call.place].op.op_id != 0) continue;
    auto [at, added] = joined.try_emplace({call.place, &found->second}, static_cast<uint32_t>(places_.size()));
    if (added) {
      Place place = call.place == kNone ? Place{} : places_[call.place];
      place.op = found->second.op;
      place.op_starts_after_ns = found->second.op_starts_after_ns;
      place.op_ends_after_ns = found->second.op_ends_after_ns;
      places_.push_back(place);
    }
    if (call.place == kNone) placed_calls_.push_back(launches[i].call);
    call.place = at->second;
  }
}

bool FrameworkContexts::complete(const Place& place, int64_t start_ns, FrameworkContext& context) const {
  // Its own op, where sampled, may be one around the op that launched it.
  bool inner_op = place.op.op_id != 0 &&
                  (context.op_id == 0 ||
                   (place.op.op_id != context.op_id && op_duration(place.op) < op_duration(context)));
  bool module = context.phase == ModulePhase::None && place.module.phase != ModulePhase::None;
  if (inner_op) {
    context.op_id = place.op.op_id;
    context.op_start_ns = start_ns + place.op_starts_after_ns;
    context.op_end_ns = shifted(place.op_ends_after_ns, start_ns);
  }
  if (module) {
    context.module_id = place.module.module_id;
    context.phase = place.module.phase;
  }
  return inner_op || module;
}

}  // namespace apptracer::trace
