// Per PyTorch module (and phase: forward, backward, or a named scope such as
// the optimizer's step) and per op: the kernels, copies and memsets it
// issued, the allocations and framework blocks made in it, and the GPU time
// of its work. Work no module or op issued is one row, "(none)", so the
// rows add up to the trace's work. A trace without framework ranges gets a
// note instead; one that sampled its ops, a note of how many launches took
// theirs from other steps.
#include <algorithm>
#include <map>
#include <tuple>

#include "analyzer/stats/stats_reports.h"
#include "analyzer/stats/sums.h"
#include "apptracer/saturating.h"

namespace apptracer {

namespace {

struct Work {
  int64_t launches = 0;
  int64_t copies = 0;
  int64_t memsets = 0;
  int64_t allocations = 0;
  int64_t gpu_ns = 0;
};

enum class GroupBy { Module, Op };

// A group's key: the module and phase, or the op.
using GroupKey = std::pair<int64_t, trace::ModulePhase>;

void add_gpu_time(Work& work, trace::NullableInt start, trace::NullableInt end) {
  if (auto duration = recorded_ns(start, end)) work.gpu_ns = saturating_add(work.gpu_ns, *duration);
}

// The work issued in each context, by (module, phase, op): what both
// groupings add up, read once for the two.
using ContextKey = std::tuple<int64_t, trace::ModulePhase, int64_t>;
std::map<ContextKey, Work> work_by_context(trace::Trace& trace) {
  const trace::FrameworkContexts& contexts = trace.framework_contexts();
  std::map<ContextKey, Work> work;
  auto in = [&](const trace::FrameworkContext& context) -> Work& {
    return work[{context.module_id, context.phase, context.op_id}];
  };
  for (const trace::Kernel& launch : trace.operations().kernels()) {
    const auto& kernel = *launch.row;
    Work& issued = in(contexts.of_call(kernel.process, kernel.call_correlation_id));
    ++issued.launches;
    add_gpu_time(issued, kernel.gpu_start_ns, kernel.gpu_end_ns);
  }
  for (const trace::Transfer& transfer : trace.operations().copies()) {
    const auto& copy = *transfer.copy_row();
    Work& issued = in(contexts.of_call(copy.process, copy.call_correlation_id));
    ++issued.copies;
    add_gpu_time(issued, copy.gpu_start_ns, copy.gpu_end_ns);
  }
  for (const trace::Transfer& transfer : trace.operations().memsets()) {
    const auto& memset = *transfer.memset_row();
    Work& issued = in(contexts.of_call(memset.process, memset.call_correlation_id));
    ++issued.memsets;
    add_gpu_time(issued, memset.gpu_start_ns, memset.gpu_end_ns);
  }
  for (const trace::Allocation& alloc : trace.operations().allocations()) {
    const auto& allocation = alloc.row();
    ++in(contexts.issued(allocation.process, allocation.alloc_tid, allocation.alloc_ns)).allocations;
  }
  // Streamed where not held: a training run's blocks are millions of rows.
  trace.each_row<SubAllocationRow>({"alloc_tid", "alloc_ns"}, [&](const trace::Packed<SubAllocationRow>& block) {
    ++in(contexts.issued(block.process, block.alloc_tid, block.alloc_ns)).allocations;
  });
  return work;
}

ReportOutput framework_report(trace::Trace& trace, const std::map<ContextKey, Work>& by_context, GroupBy by) {
  const trace::FrameworkContexts& contexts = trace.framework_contexts();
  std::map<GroupKey, Work> groups;
  for (const auto& [context, issued] : by_context) {
    const auto& [module_id, phase, op_id] = context;
    Work& group = groups[by == GroupBy::Op ? GroupKey{op_id, trace::ModulePhase::None} : GroupKey{module_id, phase}];
    group.launches += issued.launches;
    group.copies += issued.copies;
    group.memsets += issued.memsets;
    group.allocations += issued.allocations;
    group.gpu_ns = saturating_add(group.gpu_ns, issued.gpu_ns);
  }

  std::vector<std::pair<GroupKey, Work>> rows(groups.begin(), groups.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second.gpu_ns, a.second.launches) > std::tie(b.second.gpu_ns, b.second.launches);
  });
  int64_t all_launches = 0;
  for (const auto& [key, work] : rows) all_launches += work.launches;

  Table table{by == GroupBy::Module ? "modules" : "ops", {}, {}};
  if (by == GroupBy::Module) {
    table.columns = {"module", "phase"};
  } else {
    table.columns = {"op"};
  }
  table.columns.insert(table.columns.end(), {"launches", "launch_share", "copies", "memsets",
                                             "allocations", "gpu_ns"});
  for (const auto& [key, work] : rows) {
    std::vector<Cell> row{key.first ? std::string(trace.string(key.first, "?")) : "(none)"};
    if (by == GroupBy::Module) row.emplace_back(std::string(trace::to_string(key.second)));
    row.emplace_back(work.launches);
    row.emplace_back(all_launches ? static_cast<double>(work.launches) / all_launches : 0.0);
    row.emplace_back(work.copies);
    row.emplace_back(work.memsets);
    row.emplace_back(work.allocations);
    row.emplace_back(work.gpu_ns);
    table.rows.push_back(std::move(row));
  }
  // Sampled: say how much of what is shown came from other steps, and where
  // many launches are left unnamed (a run of few steps records few places
  // at 1 in N), how to name every one.
  std::string note;
  if (contexts.op_sample_every() > 1) {
    note = "ops recorded for 1 in " + std::to_string(contexts.op_sample_every()) +
           " calls (sampled, the default): " + std::to_string(contexts.from_other_steps()) + " of " +
           std::to_string(all_launches) + " kernel launches named from the same launch in other steps";
    if (contexts.from_other_calls() > 0) {
      note += ", " + std::to_string(contexts.from_other_calls()) +
              " from other calls of the module or scope around them";
    }
    int64_t unnamed = 0;
    for (const auto& [key, work] : rows) {
      if (!key.first) unnamed += work.launches;
    }
    if (all_launches > 0 && unnamed * 20 > all_launches) {
      note += "; " + std::to_string(unnamed) + " (" + std::to_string(100 * unnamed / all_launches) +
              "%) have no " + (by == GroupBy::Module ? "module" : "op") +
              ": the fewer the steps, the fewer places a step recorded "
              "(record --framework-context on records every op)";
    }
  }
  return {{std::move(table)}, note};
}

}  // namespace

namespace {

const ReportOutput kNoRanges{
    {}, "no framework ranges: not a PyTorch or JAX program, or recorded with --framework-context off or "
        "--level timing, or by an apptracer before schema 6 (record names modules and ops by default)"};

ReportOutput grouped_report(trace::Trace& trace, GroupBy by) {
  if (!trace.framework_contexts().recorded()) return kNoRanges;
  return framework_report(trace, work_by_context(trace), by);
}

}  // namespace

ReportOutput modules_report(trace::Trace& trace) { return grouped_report(trace, GroupBy::Module); }
ReportOutput ops_report(trace::Trace& trace) { return grouped_report(trace, GroupBy::Op); }

std::pair<ReportOutput, ReportOutput> modules_and_ops_reports(trace::Trace& trace) {
  if (!trace.framework_contexts().recorded()) return {kNoRanges, kNoRanges};
  std::map<ContextKey, Work> work = work_by_context(trace);
  return {framework_report(trace, work, GroupBy::Module), framework_report(trace, work, GroupBy::Op)};
}

}  // namespace apptracer
