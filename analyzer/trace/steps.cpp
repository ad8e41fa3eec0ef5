#include "analyzer/trace/steps.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analyzer/trace/framework.h"
#include "analyzer/trace/launch_cycle.h"
#include "analyzer/trace/step_names.h"
#include "analyzer/trace/trace.h"

namespace apptracer::trace {

size_t ProcessSteps::first_steady() const {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].steady) return i;
  }
  return steps.size();
}

std::optional<int64_t> ProcessSteps::startup_end_ns() const {
  size_t first = first_steady();
  if (first == steps.size()) return std::nullopt;
  return steps[first].start_ns;
}

std::optional<size_t> ProcessSteps::step_at(int64_t ns) const {
  auto after = std::upper_bound(steps.begin(), steps.end(), ns,
                                [](int64_t at, const Step& step) { return at < step.start_ns; });
  if (after == steps.begin()) return std::nullopt;
  size_t index = static_cast<size_t>(after - steps.begin()) - 1;
  if (index + 1 == steps.size() && ns > steps[index].end_ns) return std::nullopt;
  return index;
}

std::optional<size_t> ProcessSteps::steady_step_at(int64_t ns) const {
  std::optional<size_t> step = step_at(ns);
  if (step && !steps[*step].steady) return std::nullopt;
  return step;
}

std::string ProcessSteps::how_found() const {
  switch (source) {
    case StepSource::NvtxNumbered: return "NVTX ranges \"" + marker + "\" (numbered by the program)";
    case StepSource::NvtxOrdered: return "NVTX ranges \"" + marker + "\" (numbered in order)";
    case StepSource::LaunchCycle:
      return "the repeating launch sequence (" + std::to_string(period) + " launches a step)";
    case StepSource::None: break;
  }
  return "no NVTX step ranges and no repeating launch sequence";
}

const ProcessSteps* TraceSteps::find(ProcessId process) const {
  for (const ProcessSteps& steps : processes) {
    if (steps.process == process) return &steps;
  }
  return nullptr;
}

std::optional<int64_t> TraceSteps::step_of(const Operation& op) const {
  const ProcessSteps* steps = find(op.process);
  std::optional<size_t> index = steps ? steps->step_at(op.issue_ns) : std::nullopt;
  if (!index) return std::nullopt;
  return steps->steps[*index].number;
}

namespace {

// What a process launched on its busiest device (kernels by name, copies and
// memsets by kind), in issue order, and when each was issued.
struct Launches {
  std::vector<int64_t> symbols;
  std::vector<int64_t> issue_ns;
};

// A kernel, copy or memset, as much as steps are found from: a training
// trace has millions, so not the whole operation.
struct Launch {
  int64_t issue_ns = 0;
  int64_t source_id = 0;
  int64_t symbol = 0;  // kernels by name, copies and memsets by kind
  NullableInt device;
  OpKind kind = OpKind::Kernel;
};

// Everything the steps of one process are found from.
struct ProcessWork {
  std::vector<Launch> launched;
  int64_t first_ns = INT64_MAX;
  int64_t last_ns = INT64_MIN;
};

int64_t launch_symbol(const Operation& op) {
  if (op.kind == OpKind::Kernel) return op.name_id;
  return -1 - static_cast<int64_t>(op.kind) * 256 - static_cast<int64_t>(op.copy_kind);
}

Launches busiest_device_launches(std::vector<Launch>& launched) {
  std::map<std::optional<int64_t>, size_t> per_device;
  for (const Launch& launch : launched) ++per_device[launch.device.optional()];
  std::optional<int64_t> busiest;
  size_t most = 0;
  for (const auto& [device, count] : per_device) {
    if (count > most) std::tie(busiest, most) = std::tie(device, count);
  }
  // (kind, source_id) is unique: no stable sort (and its buffer) needed.
  std::sort(launched.begin(), launched.end(), [](const Launch& a, const Launch& b) {
    return std::tie(a.issue_ns, a.kind, a.source_id) < std::tie(b.issue_ns, b.kind, b.source_id);
  });
  Launches launches;
  for (const Launch& launch : launched) {
    if (launch.device.optional() != busiest) continue;
    launches.symbols.push_back(launch.symbol);
    launches.issue_ns.push_back(launch.issue_ns);
  }
  return launches;
}

struct MarkedRange {
  int64_t start_ns = 0;
  NullableInt end_ns;
  std::optional<int64_t> number;
};

struct MarkerFamily {
  int rank = 0;
  std::vector<MarkedRange> ranges;
};

// Per process, per family of step-marking NVTX ranges, its ranges.
std::map<ProcessId, std::map<std::string, MarkerFamily>> step_markers(Trace& trace) {
  std::unordered_map<int64_t, StepName> names;
  std::map<ProcessId, std::map<std::string, MarkerFamily>> markers;
  for (const Packed<NvtxRangeRow>& range : trace.rows<NvtxRangeRow>()) {
    if (range.kind == NvtxKind::Mark || !range.name_id) continue;
    auto [named, added] = names.try_emplace(*range.name_id);
    if (added) named->second = step_name(trace.string(range.name_id));
    int rank = step_marker_rank(named->second);
    if (rank == 0) continue;
    MarkerFamily& family = markers[range.process][named->second.family];
    family.rank = rank;
    family.ranges.push_back({range.start_ns, range.end_ns, named->second.number});
  }
  return markers;
}

// The surest family; of equally sure ones, the one with the most ranges.
const std::pair<const std::string, MarkerFamily>* surest(const std::map<std::string, MarkerFamily>& families) {
  const std::pair<const std::string, MarkerFamily>* best = nullptr;
  for (const auto& family : families) {
    if (!best || std::make_pair(family.second.rank, family.second.ranges.size()) >
                     std::make_pair(best->second.rank, best->second.ranges.size())) {
      best = &family;
    }
  }
  return best;
}

// Marked steps: each outermost range a step (a range inside another of its
// family is part of it), numbered as the program numbered them when every
// one is and the numbers increase, else in order from 1.
void mark_steps(ProcessSteps& steps, std::string family, std::vector<MarkedRange> ranges, int64_t last_ns) {
  std::sort(ranges.begin(), ranges.end(),
            [](const MarkedRange& a, const MarkedRange& b) { return a.start_ns < b.start_ns; });
  std::vector<MarkedRange> outermost;
  for (const MarkedRange& range : ranges) {
    if (!outermost.empty() && range.start_ns < outermost.back().end_ns.value_or(INT64_MAX)) continue;
    outermost.push_back(range);
  }
  bool numbered = true;
  for (size_t i = 0; i < outermost.size(); ++i) {
    numbered = numbered && outermost[i].number && (i == 0 || *outermost[i].number > *outermost[i - 1].number);
  }
  steps.source = numbered ? StepSource::NvtxNumbered : StepSource::NvtxOrdered;
  steps.marker = std::move(family);
  for (size_t i = 0; i < outermost.size(); ++i) {
    Step step;
    step.number = numbered ? *outermost[i].number : static_cast<int64_t>(i) + 1;
    step.start_ns = outermost[i].start_ns;
    step.end_ns = i + 1 < outermost.size() ? outermost[i + 1].start_ns
                                           : outermost[i].end_ns.value_or(std::max(last_ns, step.start_ns));
    steps.steps.push_back(step);
  }
}

// Marked steps before the first whose launches are most steps' are warm-up.
void mark_warm_up(ProcessSteps& steps, const Launches& launches) {
  std::vector<std::pair<size_t, size_t>> bounds;
  auto index_at = [&](int64_t ns) {
    return static_cast<size_t>(std::lower_bound(launches.issue_ns.begin(), launches.issue_ns.end(), ns) -
                               launches.issue_ns.begin());
  };
  for (const Step& step : steps.steps) bounds.emplace_back(index_at(step.start_ns), index_at(step.end_ns));
  size_t first = first_steady_step(launches.symbols, bounds);
  for (size_t i = 0; i < first; ++i) steps.steps[i].steady = false;
}

// The first steady steps in which a compiler ran (XLA compiling a jitted
// function on its first call with new shapes, hundreds of times a step's
// time) are warm-up too, unless every step compiled.
void mark_compiling_warm_up(ProcessSteps& steps, const CompilerTime& compiling) {
  size_t first = steps.first_steady();
  size_t compiled = first;
  while (compiled < steps.steps.size() &&
         compiling.covered(steps.process, steps.steps[compiled].start_ns, steps.steps[compiled].end_ns) > 0) {
    ++compiled;
  }
  if (compiled == steps.steps.size()) return;
  for (size_t i = first; i < compiled; ++i) steps.steps[i].steady = false;
}

// How many launches from `last` on follow the step `symbols[step, step_end)`
// launch by launch: a launch one side has and the other lacks (a loss read
// back in one step only) is stepped over, and the walk stops at the second
// launch in a row that follows neither.
size_t launches_following(const std::vector<int64_t>& symbols, size_t step, size_t step_end, size_t last) {
  size_t prev_end = step_end, i = step, j = last, followed = last;
  int misses = 0;
  while (i < prev_end && j < symbols.size() && misses < 2) {
    if (symbols[i] == symbols[j]) {
      ++i, followed = ++j, misses = 0;
    } else if (i + 1 < prev_end && symbols[i + 1] == symbols[j]) {
      ++i;
    } else if (j + 1 < symbols.size() && symbols[i] == symbols[j + 1]) {
      ++j;
    } else {
      ++i, ++j, ++misses;
    }
  }
  return followed - last;
}

// Where the last step ends: as long after its last launch that follows the
// step before it as that step ran on after its own last launch, and no later
// than the next launch (or the run's end). What the program does after its
// loop (a framework moving the model back to the CPU, its last step's
// optimizer tail followed by a copy per tensor; a final print that reads
// the loss back after a pause; a loss computed again op by op) is no
// step's, and a last step cut short, its launches a prefix of a step's,
// ends alike.
int64_t last_step_end(const Launches& launches, const LaunchCycle& cycle, int64_t last_ns) {
  size_t start = cycle.starts.back();
  int64_t step_start = launches.issue_ns[start];
  if (cycle.starts.size() < 2) return std::max(last_ns, step_start);
  size_t previous = cycle.starts[cycle.starts.size() - 2];
  size_t end = start + launches_following(launches.symbols, previous, start, start);
  // Nor does a launch after a pause longer than the whole step before
  // follow it: the host did other work (compiling what the program runs
  // next) before it.
  int64_t step_before_ns = step_start - launches.issue_ns[previous];
  for (size_t i = start + 1; i < end; ++i) {
    if (launches.issue_ns[i] - launches.issue_ns[i - 1] > step_before_ns) end = i;
  }
  int64_t bound = end < launches.issue_ns.size() ? launches.issue_ns[end] : std::max(last_ns, step_start);
  if (end == start) return bound;
  int64_t tail = launches.issue_ns[start] - launches.issue_ns[start - 1];
  return std::min(bound, launches.issue_ns[end - 1] + tail);
}

// Past this many cells (launches looked at by launches of a step), the
// longest common subsequence would cost seconds: a step of tens of
// thousands of launches.
constexpr size_t kMaxOrderCells = size_t{1} << 26;

// How many launches of `step` `symbols[from, to)` holds in the step's
// order, others between them (the longest common subsequence's length;
// past kMaxOrderCells, the launches matched first to first, at most that).
size_t launches_in_order(const std::vector<int64_t>& symbols, size_t from, size_t to, const std::vector<int64_t>& step) {
  size_t greedy = 0;
  for (size_t i = from; i < to && greedy < step.size(); ++i) {
    if (symbols[i] == step[greedy]) ++greedy;
  }
  if (greedy == step.size() || (to - from) > kMaxOrderCells / step.size()) return greedy;
  std::vector<uint32_t> before(step.size() + 1, 0), row(step.size() + 1, 0);
  for (size_t i = from; i < to; ++i) {
    for (size_t j = 1; j <= step.size(); ++j) {
      row[j] = symbols[i] == step[j - 1] ? before[j - 1] + 1 : std::max(before[j], row[j - 1]);
    }
    std::swap(before, row);
  }
  return before[step.size()];
}

// The share of a step's launches the first iteration holds in order.
constexpr double kMinFirstIterationShare = 0.9;
// How many launches before the first step are tried as the first
// iteration's start, latest first: each costs a step by three.
constexpr int kFirstIterationTries = 4;

// A loop's first iteration often does other work than the rest (an
// optimizer making its state, a first read-back of the loss), so it is no
// copy of the cycle, which starts a step later. Where the launches before the
// first step, from a launch of its first kernel on and within three steps'
// worth, hold nine in ten of the step's launches in its order, they are that
// iteration: a step, warm-up (not steady). Its start: the latest such launch.
std::optional<size_t> first_iteration(const std::vector<int64_t>& symbols, const LaunchCycle& cycle) {
  if (cycle.starts.size() < 2) return std::nullopt;
  size_t first = cycle.starts[0];
  std::vector<int64_t> step(symbols.begin() + static_cast<std::ptrdiff_t>(first),
                            symbols.begin() + static_cast<std::ptrdiff_t>(cycle.starts[1]));
  auto needed = static_cast<size_t>(kMinFirstIterationShare * static_cast<double>(step.size()));
  size_t earliest = first > 3 * step.size() ? first - 3 * step.size() : 0;
  int tries = 0;
  for (size_t at = first; at-- > earliest && tries < kFirstIterationTries;) {
    if (symbols[at] != symbols[first] || first - at < needed) continue;
    ++tries;
    if (launches_in_order(symbols, at, first, step) >= needed) return at;
  }
  return std::nullopt;
}

// What a program does after its loop can begin with the step's first launch
// and be about as long as a step (a jitted loop's loss computed again op by
// op, eagerly, begins with the same reduction): a last start after which
// other launches come but none follows the first step is no step. (A last
// step cut short, a prefix of a step, follows it, or is its first launch
// alone; a step of one launch is followed by its first launch.)
void drop_steps_after_loop(LaunchCycle& cycle, const std::vector<int64_t>& symbols) {
  size_t whole_step = std::min<size_t>(2, cycle.period);
  size_t kept = cycle.starts.size();
  while (kept > kMinSteps && cycle.starts[kept - 1] + 1 < symbols.size() &&
         launches_following(symbols, cycle.starts[0], cycle.starts[1], cycle.starts[kept - 1]) < whole_step) {
    --kept;
  }
  cycle.starts.resize(kept);
}

void detect_steps(ProcessSteps& steps, const Launches& launches, int64_t last_ns) {
  std::optional<LaunchCycle> cycle = find_launch_cycle(launches.symbols);
  if (!cycle) return;
  drop_steps_after_loop(*cycle, launches.symbols);
  steps.source = StepSource::LaunchCycle;
  steps.period = cycle->period;
  if (std::optional<size_t> warm_up = first_iteration(launches.symbols, *cycle)) {
    Step step;
    step.number = 1;
    step.start_ns = launches.issue_ns[*warm_up];
    step.end_ns = launches.issue_ns[cycle->starts[0]];
    step.steady = false;
    steps.steps.push_back(step);
  }
  for (size_t i = 0; i < cycle->starts.size(); ++i) {
    Step step;
    step.number = static_cast<int64_t>(steps.steps.size()) + 1;
    step.start_ns = launches.issue_ns[cycle->starts[i]];
    step.end_ns = i + 1 < cycle->starts.size() ? launches.issue_ns[cycle->starts[i + 1]]
                                               : last_step_end(launches, *cycle, last_ns);
    steps.steps.push_back(step);
  }
}

// visit(operation_of(row)) for each row of Row's table (Trace::each_row).
template <typename Row, typename Visit>
void each_operation(Trace& trace, const ColumnNames& columns, Visit&& visit) {
  trace.each_row<Row>(columns, [&](const Packed<Row>& row) { visit(operation_of(row)); });
}

}  // namespace

TraceSteps find_steps(Trace& trace) {
  // A compiler's trial launches (XLA autotuning each new shape on worker
  // threads) are no step's: among them a short run's loop is too small a
  // share of the launches to be found.
  CompilerTime compiling;
  for (const Packed<NvtxRangeRow>& range : trace.rows<NvtxRangeRow>()) {
    compiling.add(range.process, trace.string(range.name_id, ""), range.start_ns, range.end_ns.value_or(range.start_ns));
  }
  compiling.finish();
  std::map<ProcessId, ProcessWork> work;
  auto add = [&](const Operation& op) {
    if (compiling.at(op.process, op.issue_ns)) return;
    ProcessWork& process = work[op.process];
    process.launched.push_back({op.issue_ns, op.source_id, launch_symbol(op), op.device, op.kind});
    process.first_ns = std::min(process.first_ns, op.issue_ns);
    process.last_ns = std::max(process.last_ns, op.end_ns);
  };
  // What operation_of reads of a kernel; copies and memsets are few.
  each_operation<KernelRow>(trace, {"id", "stream", "device", "demangled_id", "name_id", "api_start_ns",
                                    "gpu_start_ns", "gpu_end_ns"}, add);
  each_operation<MemcpyRow>(trace, {}, add);
  each_operation<MemsetRow>(trace, {}, add);
  auto markers = step_markers(trace);
  for (const auto& [process, families] : markers) work.try_emplace(process);
  TraceSteps found;
  for (auto& [process, process_work] : work) {
    ProcessSteps steps;
    steps.process = process;
    const TraceProcess* listed = trace.processes().find(process);
    steps.start_ns = listed && listed->start_ns ? *listed->start_ns
                                                : (process_work.launched.empty() ? 0 : process_work.first_ns);
    Launches launches = busiest_device_launches(process_work.launched);
    process_work.launched = {};
    auto marked = markers.find(process);
    if (marked != markers.end()) {
      const auto* family = surest(marked->second);
      mark_steps(steps, family->first, family->second.ranges, process_work.last_ns);
      mark_warm_up(steps, launches);
    } else {
      detect_steps(steps, launches, process_work.last_ns);
    }
    mark_compiling_warm_up(steps, compiling);
    found.processes.push_back(std::move(steps));
  }
  return found;
}

}  // namespace apptracer::trace
