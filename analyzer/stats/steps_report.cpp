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
#include <utility>
#include <vector>

#include "analyzer/stats/duration_summary.h"
#include "analyzer/stats/stats_reports.h"
#include "apptracer/saturating.h"

namespace apptracer {

namespace {

using Interval = std::pair<int64_t, int64_t>;

// A GPU interval, and the phase (start-up or a step) that issued it.
struct PhaseInterval {
  int64_t start = 0, end = 0;
  uint32_t phase = 0;
};

// Sorted, disjoint intervals, and how much of [from, to) they cover.
class Coverage {
 public:
  // From intervals sorted by start: empty ones skip, touching ones merge.
  template <typename Iterator>
  Coverage(Iterator begin, Iterator end) {
    for (Iterator it = begin; it != end; ++it) {
      if (it->end <= it->start) continue;
      if (!merged_.empty() && it->start <= merged_.back().second) {
        merged_.back().second = std::max(merged_.back().second, it->end);
      } else {
        merged_.emplace_back(it->start, it->end);
      }
    }
    before_.reserve(merged_.size() + 1);
    before_.push_back(0);
    for (const Interval& interval : merged_) {
      before_.push_back(saturating_add(before_.back(), saturating_sub(interval.second, interval.first)));
    }
  }

  int64_t covered(int64_t from, int64_t to) const {
    if (to <= from) return 0;
    return saturating_sub(covered_before(to), covered_before(from));
  }

  int64_t total() const { return before_.back(); }

 private:
  // How much lies before `ns`.
  int64_t covered_before(int64_t ns) const {
    auto after = std::upper_bound(merged_.begin(), merged_.end(), ns,
                                  [](int64_t at, const Interval& interval) { return at < interval.first; });
    size_t whole = static_cast<size_t>(after - merged_.begin());
    if (whole == 0) return 0;
    const Interval& last = merged_[whole - 1];
    return saturating_add(before_[whole - 1], saturating_sub(std::min(ns, last.second), last.first));
  }

  std::vector<Interval> merged_;
  std::vector<int64_t> before_;  // covered by merged_[0 .. i)
};

// What a phase (start-up or one step) issued, and how long the GPU ran it.
struct PhaseWork {
  int64_t launches = 0, copies = 0, memsets = 0;
  int64_t gpu_busy = 0;
};

// A process's work by phase (index 0 start-up, i + 1 step i), and every GPU
// interval with the phase that issued it: held once (a training trace has a
// million kernels; an interval per phase and per process, and the copies
// made to merge them, were the report's peak).
struct ProcessWork {
  std::vector<PhaseWork> phases;
  std::vector<PhaseInterval> gpu;
};

template <typename Row>
void add_work(std::map<trace::ProcessId, ProcessWork>& work, const trace::TraceSteps& steps, const Row& row,
              int64_t PhaseWork::*counted) {
  const trace::ProcessSteps* process_steps = steps.find(row.process);
  if (!process_steps || process_steps->steps.empty()) return;
  ProcessWork& process = work[row.process];
  process.phases.resize(process_steps->steps.size() + 1);
  std::optional<size_t> step = process_steps->step_at(trace::event_ns(row));
  size_t phase = step && *step >= process_steps->first_steady() ? *step + 1 : 0;
  if (!step && trace::event_ns(row) >= process_steps->steps.front().start_ns) return;  // after the last step
  ++(process.phases[phase].*counted);
  if (row.gpu_start_ns && row.gpu_end_ns) {
    process.gpu.push_back({*row.gpu_start_ns, *row.gpu_end_ns, static_cast<uint32_t>(phase)});
  }
}

// Each phase's GPU busy time (the union of its intervals), then the union of
// all of them, which the host gaps are measured against. Sorts the intervals
// where they are, and frees them.
Coverage gpu_coverage(ProcessWork& work) {
  std::vector<PhaseInterval>& gpu = work.gpu;
  std::sort(gpu.begin(), gpu.end(), [](const PhaseInterval& a, const PhaseInterval& b) {
    return a.phase != b.phase ? a.phase < b.phase : a.start < b.start;
  });
  for (auto first = gpu.begin(); first != gpu.end();) {
    auto last = std::find_if(first, gpu.end(), [&](const PhaseInterval& i) { return i.phase != first->phase; });
    work.phases[first->phase].gpu_busy = Coverage(first, last).total();
    first = last;
  }
  std::sort(gpu.begin(), gpu.end(), [](const PhaseInterval& a, const PhaseInterval& b) { return a.start < b.start; });
  Coverage anywhere(gpu.begin(), gpu.end());
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
  const std::vector<trace::Kernel>& kernels = operations.kernels();
  const trace::TraceSteps& steps = trace.steps();
  std::map<trace::ProcessId, ProcessWork> work;
  // Each process's intervals held at their count (grown by doubling, a
  // million kernels' took up to twice their room).
  std::map<trace::ProcessId, size_t> intervals;
  for (const trace::Kernel& launch : kernels) ++intervals[launch.row->process];
  for (const trace::Transfer& transfer : operations.copies()) ++intervals[transfer.copy_row()->process];
  for (const trace::Transfer& transfer : operations.memsets()) ++intervals[transfer.memset_row()->process];
  for (const auto& [process, count] : intervals) {
    const trace::ProcessSteps* process_steps = steps.find(process);
    if (process_steps && !process_steps->steps.empty()) work[process].gpu.reserve(count);
  }
  for (const trace::Kernel& launch : kernels) {
    const auto& kernel = *launch.row;
    add_work(work, steps, kernel, &PhaseWork::launches);
  }
  for (const trace::Transfer& transfer : operations.copies()) {
    const auto& copy = *transfer.copy_row();
    add_work(work, steps, copy, &PhaseWork::copies);
  }
  for (const trace::Transfer& transfer : operations.memsets()) {
    const auto& memset = *transfer.memset_row();
    add_work(work, steps, memset, &PhaseWork::memsets);
  }
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
    process_work.phases.resize(process.steps.size() + 1);
    Coverage busy_anywhere = gpu_coverage(process_work);
    size_t first = process.first_steady();
    int64_t startup_end = process.steps[first].start_ns;
    if (!window) {
      per_step.rows.push_back(phase_row(trace, process, Cell{}, "start-up", process.start_ns, startup_end,
                                        process_work.phases[0], busy_anywhere));
    }
    std::vector<int64_t> walls, busy;
    for (size_t i = first; i < process.steps.size(); ++i) {
      const trace::Step& step = process.steps[i];
      if (window && !window->holds(process.process, step.start_ns)) continue;
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
