#include "analyzer/diagnose/rules.h"

#include <algorithm>
#include <cmath>

#include "analyzer/diagnose/ranked_findings.h"
#include "analyzer/diagnose/site_groups.h"

namespace apptracer::diagnose {

const std::vector<Rule>& all_rules() {
  static const std::vector<Rule> rules = {
      {"pageable_copy", "copies from or to pageable host memory, and what pinning it saves",
       "nsys cuda_memcpy_async", pageable_copy},
      {"small_copies", "many small latency-bound copies the same way, and what one batched copy saves",
       "", small_copies},
      {"redundant_copy",
       "copies of data the destination already holds (DVDG values), incl. data copied back unchanged",
       "", redundant_copy},
      {"no_copy_compute_overlap",
       "copies serialized with kernels that the DVDG shows independent of them",
       "HTA communication/computation overlap", no_copy_compute_overlap},
      {"sync_copy", "synchronous copies blocking the host", "nsys cuda_memcpy_sync", sync_copy},
      {"sync_memset", "synchronous memsets blocking the host", "nsys cuda_memset_sync", sync_memset},
      {"sync_api", "host time blocked in synchronizations, and the GPU idle time they leave",
       "nsys cuda_api_sync; HTA idle time breakdown (host wait)", sync_api},
      {"gpu_idle_gap", "GPU idle gaps and the host calls that caused them",
       "nsys gpu_gaps; HTA idle time breakdown", gpu_idle_gap},
      {"gpu_low_utilization", "stretches of the run where the GPU is busy less than half the time",
       "nsys gpu_time_util; HTA temporal breakdown", gpu_low_utilization},
      {"launch_bound_kernels",
       "a step (or run) whose GPU waits on launches longer than it works, with its kernels",
       "HTA CUDA kernel launch statistics", launch_bound_kernels},
      {"allocation_churn", "allocations of one size freed and made again, as in a loop", "",
       allocation_churn},
      {"um_on_demand_migration",
       "unified memory moved by page faults, with the prefetch that avoids it", "",
       um_on_demand_migration},
      {"um_thrashing", "unified memory moving back and forth, with the advice that stops it", "",
       um_thrashing},
      {"collective_straggler",
       "collectives every rank waited on because one arrived late, and what held that rank",
       "HTA straggler detection", collective_straggler},
      {"numa_far_host_buffer", "host buffers on a NUMA node other than their GPU's", "",
       numa_far_host_buffer},
      {"xla_compile",
       "steps in which XLA compiled (new input shapes), one finding with the compiler's own work folded in",
       "", xla_compile},
      {"startup", "start-up before the first steady step, paid once: one finding", "", startup,
       true},
      {"uninitialized_read", "reads of memory nothing wrote (DVDG)", "", uninitialized_read, true},
      {"written_never_read", "device memory written and never read (DVDG)", "",
       written_never_read, true},
      {"allocation_never_used", "allocations nothing ever touched (DVDG)", "",
       allocation_never_used, true},
      {"memory_leak", "live memory growing step after step, with the producer of the blocks kept", "",
       memory_leak},
      {"memory_never_used", "memory live at its device's peak that nothing ever read or wrote", "",
       memory_never_used, true},
      {"memory_allocated_early", "memory live at its device's peak, allocated long before its first use", "",
       memory_allocated_early, true},
      {"memory_freed_late", "memory live at its device's peak, freed long after its last use", "",
       memory_freed_late, true},
      {"memory_cached_at_peak", "free space a framework's allocator keeps cached at its device's peak", "",
       memory_cached_at_peak},
  };
  return rules;
}

void run_rules(const TraceFacts& facts, const TransferCost& cost, const Thresholds& limits,
               RuleSet set, std::vector<Finding>& findings, std::optional<int64_t> untraced_step_ns) {
  RuleContext context{facts, cost, limits, untraced_step_ns};
  size_t first = findings.size();
  for (const Rule& rule : all_rules()) {
    bool runs = set == RuleSet::WholeRunOnly ? rule.whole_run
                : set == RuleSet::StepsOnly  ? !rule.whole_run
                                             : !rule.whole_run || facts.step_window.empty();
    if (runs) rule.run(context, findings);
  }
  if (facts.step_window.empty()) return;
  for (size_t i = first; i < findings.size(); ++i) {
    if (findings[i].steps == 0 && !findings[i].startup) findings[i].steps = facts.step_count();
  }
}

std::vector<Finding> finish_findings(std::vector<Finding> findings, const Thresholds& limits,
                                     int64_t run_ns, int64_t step_ns, int64_t run_steps) {
  for (Finding& f : findings) {
    if (!f.while_compiling) continue;
    f.startup = true;
    f.steps = 0;  // paid once per compile, not a share of every step: its totals are shown
    f.estimate += std::string(f.estimate.empty() ? "" : "; ") +
                  "while XLA compiled (a new shape, its autotuning): the compiler's, paid once per compile";
  }
  findings = group_by_site(std::move(findings), static_cast<size_t>(limits.max_evidence_rows));
  findings = fold_compiler_work(std::move(findings));
  rank_findings(findings, run_ns, {step_ns, limits.min_step_share, limits.one_off_step_share, run_steps});
  return findings;
}

std::vector<Finding> diagnose(const TraceFacts& facts, const TransferCost& cost,
                              const Thresholds& limits) {
  std::vector<Finding> findings;
  run_rules(facts, cost, limits, RuleSet::Applicable, findings);
  return finish_findings(std::move(findings), limits, facts.run_ns(), facts.median_step_ns());
}

std::vector<std::string> diagnosis_notes(const TraceFacts& facts, bool whole_run_rules_ran) {
  std::vector<std::string> notes;
  if (whole_run_rules_ran) {
    notes.push_back("looked at the " + facts.step_window + ": savings per step are over " +
                    std::to_string(facts.step_count()) +
                    " steps; start-up is one finding; the data-flow rules looked at the whole run");
  } else if (!facts.step_window.empty()) {
    std::string skipped;
    for (const Rule& rule : all_rules()) {
      if (rule.whole_run) skipped += (skipped.empty() ? "" : ", ") + std::string(rule.name);
    }
    notes.push_back("limited to " + facts.step_window + "; " + skipped +
                    " need the whole run and did not run");
  }
  if (whole_run_rules_ran && !facts.ops().steps().empty() && !facts.tracer_time.empty()) {
    // What the findings' times still hold of the tracer, per step, so the
    // reader can weigh them (trace/tracer_time.h).
    int64_t between = 0, in_calls = 0, steps = 0;
    for (const trace::StepSpan& step : facts.ops().steps()) {
      auto id = static_cast<trace::ProcessId>(step.process);
      between = saturating_add(between, facts.tracer_time.between_calls_ns(id, step.start_ns, step.end_ns));
      in_calls = saturating_add(in_calls, facts.tracer_time.in_calls_ns(id, step.start_ns, step.end_ns));
      ++steps;
    }
    notes.push_back("apptracer took about " + format_ns(saturating_add(between, in_calls) / steps) +
                    " of each steady step (median " + format_ns(facts.median_step_ns()) +
                    ") on the program's threads: its CUDA callbacks " + format_ns(in_calls / steps) +
                    ", its allocator hooks and module and op ranges " + format_ns(between / steps) +
                    " (sampled: stats --report tracer; CUPTI's own work around each callback is not "
                    "timed); savings are priced without the hooks");
  }
  if (facts.framework == trace::Framework::Pytorch && !facts.framework_context) {
    notes.push_back(
        "recorded without framework context: 'apptracer record' (by default, or with "
        "--framework-context sampled) names the PyTorch module and op behind each kernel");
  }
  if (facts.um_migrations_not_recorded) {
    notes.push_back(
        "the program uses managed memory but its migrations were not recorded: the unified-memory "
        "rules need 'apptracer record --unified-memory migrations' (or all)");
  }
  return notes;
}

void locate(const RuleContext& context, Finding& finding, std::optional<int64_t> correlation,
            int64_t issue_ns) {
  const HostCall* call = context.facts.ops().call(correlation);
  finding.call_site = context.facts.ops().call_site(correlation);
  finding.framework =
      call ? context.facts.ops().framework_label(context.facts.ops().framework_context(call->process(), correlation))
           : "";
  finding.nvtx = context.facts.ops().nvtx_at(call ? std::optional<int64_t>(call->tid()) : std::nullopt,
                                       call ? call->start_ns() : issue_ns);
  finding.while_compiling = call && context.facts.compiling(call->process(), call->start_ns());
}

void add_row(const RuleContext& context, Finding& finding, const char* table, int64_t row) {
  if (static_cast<int64_t>(finding.rows.size()) >= context.limits.max_evidence_rows) return;
  bool known = std::any_of(finding.rows.begin(), finding.rows.end(),
                           [&](const Evidence& e) { return e.row == row && e.table == table; });
  if (!known) finding.rows.push_back({table, row});
}

void add_name(Finding& finding, std::string_view name) {
  if (finding.names.size() >= 8) return;
  if (std::find(finding.names.begin(), finding.names.end(), name) == finding.names.end())
    finding.names.emplace_back(name);
}

int64_t held_ns(const TraceFacts& facts, const Intervals& busy, const Transfer& copy) {
  const HostCall* call = facts.ops().call(copy.correlation());
  if (!call || !copy.timed()) return copy.gpu_ns();
  int64_t queued = covered_ns(busy, call->start_ns(), std::max(call->start_ns(), *copy.gpu_start_ns()));
  return std::max(copy.gpu_ns(), saturating_sub(call->duration(), queued));
}

void set_saving(Finding& finding, int64_t now_ns, std::optional<double> predicted_ns,
                const std::string& estimate) {
  finding.estimate = estimate;
  if (!predicted_ns) {
    finding.saving_ns.reset();
    return;
  }
  finding.saving_ns = std::max<int64_t>(0, saturating_sub(now_ns, saturating_round(*predicted_ns)));
}

}  // namespace apptracer::diagnose
