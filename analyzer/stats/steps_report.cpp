// Per step of each process (analyzer/trace/steps.h), and one line for its
// start-up (phase "start-up": from the process's start to its first steady
// step, warm-up steps included): when it started (ns since the time
// origin), its wall time (to the next step's start), GPU busy (the length of
// the union of the GPU intervals of the kernels, copies and memsets it
// issued), the launches, copies and memsets it issued, and its host gap (the
// part of its wall during which none of the process's GPUs ran anything:
// time the host did not keep them fed). A second table sums up each
// process: its steps, start-up, the median steady step and how the steps
// were found. Limited to steps (--steps, --steady), only those are listed.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "analyzer/stats/duration_summary.h"
#include "analyzer/stats/stats_reports.h"
#include "apptracer/saturating.h"

namespace apptracer {

namespace {

using Interval = std::pair<int64_t, int64_t>;

// A GPU interval.
struct Span {
  int64_t start = 0, end = 0;
};

// Of intervals sorted by start (empty ones skip, touching ones merge): calls
// `merged(interval)` for each merged interval, in order.
template <typename Iterator, typename Merged>
void each_merged(Iterator begin, Iterator end, Merged&& merged) {
  std::optional<Interval> current;
  for (Iterator it = begin; it != end; ++it) {
    if (it->end <= it->start) continue;
    if (current && it->start <= current->second) {
      current->second = std::max(current->second, it->end);
      continue;
    }
    if (current) merged(*current);
    current = Interval{it->start, it->end};
  }
  if (current) merged(*current);
}

// How much the intervals cover, in all.
template <typename Iterator>
int64_t covered_total(Iterator begin, Iterator end) {
  int64_t total = 0;
  each_merged(begin, end, [&](const Interval& interval) {
    total = saturating_add(total, saturating_sub(interval.second, interval.first));
  });
  return total;
}

// How much of [from, to) sorted intervals cover, for the times asked about
// when made: found in one pass over the intervals, not a list of them merged
// (a training trace has a million kernels).
class Coverage {
 public:
  // From intervals sorted by start (empty ones skip, touching ones merge).
  Coverage(const std::vector<Span>& sorted, std::vector<int64_t> times) : times_(std::move(times)) {
    std::sort(times_.begin(), times_.end());
    times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
    before_.resize(times_.size());
    size_t next = 0;  // the first time not answered
    // The last merged interval passed, and how much lies before it.
    std::optional<Interval> last;
    int64_t before_last = 0;
    auto answer_until = [&](std::optional<int64_t> limit) {
      for (; next < times_.size() && (!limit || times_[next] < *limit); ++next) {
        before_[next] = last ? saturating_add(before_last, saturating_sub(std::min(times_[next], last->second), last->first)) : 0;
      }
    };
    each_merged(sorted.begin(), sorted.end(), [&](const Interval& interval) {
      answer_until(interval.first);
      if (last) before_last = saturating_add(before_last, saturating_sub(last->second, last->first));
      last = interval;
    });
    answer_until(std::nullopt);
  }

  // `from` and `to` among the times it was made for.
  int64_t covered(int64_t from, int64_t to) const {
    if (to <= from) return 0;
    return saturating_sub(covered_before(to), covered_before(from));
  }

 private:
  int64_t covered_before(int64_t ns) const {
    return before_[static_cast<size_t>(std::lower_bound(times_.begin(), times_.end(), ns) - times_.begin())];
  }

  std::vector<int64_t> times_;   // sorted, once each
  std::vector<int64_t> before_;  // how much lies before times_[i]
};

// What a phase (start-up or one step) issued, and how long the GPU ran it.
struct PhaseWork {
  int64_t launches = 0, copies = 0, memsets = 0;
  int64_t gpu_busy = 0;
};

// A process's work by phase (index 0 start-up, i + 1 step i), and every GPU
// interval, grouped by the phase that issued it: held once, 16 bytes each,
// in a list made at its size (a training trace has a million kernels; an
// interval per phase and per process, and the copies made to merge them,
// were the report's peak).
struct ProcessWork {
  std::vector<PhaseWork> phases;
  std::vector<size_t> phase_gpu;  // phase p's intervals: gpu[phase_gpu[p] .. phase_gpu[p + 1])
  std::vector<Span> gpu;
};

// Calls `visit(work, phase, counted, row)` for each kernel, copy and memset
// issued in a process's start-up or steps, with the member of its phase's
// PhaseWork that counts it.
template <typename Visit>
void each_work(const trace::TraceOperations& operations, const trace::TraceSteps& steps,
               std::map<trace::ProcessId, ProcessWork>& work, Visit&& visit) {
  auto phase_of = [&](const auto& row, int64_t PhaseWork::*counted) {
    const trace::ProcessSteps* process_steps = steps.find(row.process);
    if (!process_steps || process_steps->steps.empty()) return;
    std::optional<size_t> step = process_steps->step_at(trace::event_ns(row));
    if (!step && trace::event_ns(row) >= process_steps->steps.front().start_ns) return;  // after the last step
    size_t phase = step && *step >= process_steps->first_steady() ? *step + 1 : 0;
    visit(work[row.process], phase, counted, row);
  };
  for (const trace::Kernel& launch : operations.kernels()) phase_of(*launch.row, &PhaseWork::launches);
  for (const trace::Transfer& transfer : operations.copies()) phase_of(*transfer.copy_row(), &PhaseWork::copies);
  for (const trace::Transfer& transfer : operations.memsets()) phase_of(*transfer.memset_row(), &PhaseWork::memsets);
}

// Each process's work by phase, its GPU intervals counted first and then
// placed by phase.
std::map<trace::ProcessId, ProcessWork> work_by_phase(const trace::TraceOperations& operations,
                                                      const trace::TraceSteps& steps) {
  std::map<trace::ProcessId, ProcessWork> work;
  for (const trace::ProcessSteps& process : steps.processes) {
    if (process.steps.empty()) continue;
    work[process.process].phases.resize(process.steps.size() + 1);
    work[process.process].phase_gpu.resize(process.steps.size() + 2);
  }
  each_work(operations, steps, work, [](ProcessWork& process, size_t phase, int64_t PhaseWork::*counted, const auto& row) {
    ++(process.phases[phase].*counted);
    if (row.gpu_start_ns && row.gpu_end_ns) ++process.phase_gpu[phase + 1];
  });
  std::map<trace::ProcessId, std::vector<size_t>> placed;  // the next free place of each phase's intervals
  for (auto& [process, process_work] : work) {
    std::vector<size_t>& starts = process_work.phase_gpu;
    for (size_t p = 1; p < starts.size(); ++p) starts[p] += starts[p - 1];
    process_work.gpu.resize(starts.back());
    placed[process].assign(starts.begin(), starts.end() - 1);
  }
  each_work(operations, steps, work, [&](ProcessWork& process, size_t phase, int64_t PhaseWork::*, const auto& row) {
    if (row.gpu_start_ns && row.gpu_end_ns) process.gpu[placed[row.process][phase]++] = {*row.gpu_start_ns, *row.gpu_end_ns};
  });
  return work;
}

// Each phase's GPU busy time (the union of its intervals), then how much of
// each of `times` the union of all of them covers, which the host gaps are
// measured against. Sorts the intervals where they are, and frees them.
Coverage gpu_coverage(ProcessWork& work, std::vector<int64_t> times) {
  std::vector<Span>& gpu = work.gpu;
  auto by_start = [](const Span& a, const Span& b) { return a.start < b.start; };
  for (size_t phase = 0; phase < work.phases.size(); ++phase) {
    auto first = gpu.begin() + static_cast<ptrdiff_t>(work.phase_gpu[phase]);
    auto last = gpu.begin() + static_cast<ptrdiff_t>(work.phase_gpu[phase + 1]);
    std::sort(first, last, by_start);
    work.phases[phase].gpu_busy = covered_total(first, last);
  }
  std::sort(gpu.begin(), gpu.end(), by_start);
  Coverage anywhere(gpu, std::move(times));
  gpu = {};
  return anywhere;
}

std::vector<Cell> phase_row(trace::Trace& trace, const trace::ProcessSteps& steps, const Cell& number,
                            const char* phase, int64_t start, int64_t end, const PhaseWork& work,
                            const Coverage& busy_anywhere) {
  int64_t wall = std::max<int64_t>(0, saturating_sub(end, start));
  return {static_cast<int64_t>(steps.process), number, std::string(phase), trace.origin().since(start), wall,
          work.gpu_busy, work.launches, work.copies, work.memsets,
          saturating_sub(wall, busy_anywhere.covered(start, end))};
}

// NULL over no steps.
Cell median_cell(const std::vector<int64_t>& durations) {
  if (durations.empty()) return {};
  return summarize_durations(durations).median;
}

}  // namespace

ReportOutput steps_report(trace::Trace& trace) {
  // The kernels first: the steps are then found from the rows they hold.
  const trace::TraceOperations& operations = trace.operations();
  const trace::TraceSteps& steps = trace.steps();
  std::map<trace::ProcessId, ProcessWork> work = work_by_phase(operations, steps);
  const trace::StepWindow* window = trace.window();
  Table per_step{"steps",
                 {"process", "step", "phase", "start_ns", "wall_ns", "gpu_busy_ns", "launches", "copies",
                  "memsets", "host_gap_ns"},
                 {}};
  Table summary{"step_summary",
                {"process", "steps", "steady_steps", "startup_ns", "median_wall_ns", "median_gpu_busy_ns",
                 "found_from"},
                {}};
  std::string none;
  for (const trace::ProcessSteps& process : steps.processes) {
    if (process.steps.empty()) {
      none = process.how_found();
      continue;
    }
    ProcessWork& process_work = work[process.process];
    size_t first = process.first_steady();
    int64_t startup_end = process.steps[first].start_ns;
    auto shown = [&](const trace::Step& step) { return !window || window->holds(process.process, step.start_ns); };
    // The times the host gaps are measured between.
    std::vector<int64_t> times;
    if (!window) times.insert(times.end(), {process.start_ns, startup_end});
    for (size_t i = first; i < process.steps.size(); ++i) {
      if (shown(process.steps[i])) times.insert(times.end(), {process.steps[i].start_ns, process.steps[i].end_ns});
    }
    Coverage busy_anywhere = gpu_coverage(process_work, std::move(times));
    if (!window) {
      per_step.rows.push_back(phase_row(trace, process, Cell{}, "start-up", process.start_ns, startup_end,
                                        process_work.phases[0], busy_anywhere));
    }
    std::vector<int64_t> walls, busy;
    for (size_t i = first; i < process.steps.size(); ++i) {
      const trace::Step& step = process.steps[i];
      if (!shown(step)) continue;
      per_step.rows.push_back(phase_row(trace, process, step.number, "step", step.start_ns, step.end_ns,
                                        process_work.phases[i + 1], busy_anywhere));
      walls.push_back(std::get<int64_t>(per_step.rows.back()[4]));
      busy.push_back(std::get<int64_t>(per_step.rows.back()[5]));
    }
    summary.rows.push_back({static_cast<int64_t>(process.process), static_cast<int64_t>(process.steps.size()),
                            static_cast<int64_t>(process.steps.size() - first),
                            std::max<int64_t>(0, saturating_sub(startup_end, process.start_ns)),
                            median_cell(walls), median_cell(busy), process.how_found()});
  }
  if (summary.rows.empty()) return {{}, "no steps: " + (none.empty() ? trace::ProcessSteps{}.how_found() : none)};
  return {{per_step, summary}, {}};
}

}  // namespace apptracer
