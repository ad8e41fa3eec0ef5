#include "analyzer/diagnose/diagnosis.h"

#include <algorithm>
#include <optional>

#include "analyzer/diagnose/analyses.h"
#include "analyzer/diagnose/link_model_choice.h"

namespace apptracer::diagnose {

namespace {

bool has_steady_steps(trace::Trace& trace) {
  const auto& processes = trace.steps().processes;
  return std::any_of(processes.begin(), processes.end(),
                     [](const trace::ProcessSteps& p) { return p.startup_end_ns().has_value(); });
}

void show(Progress* progress, const char* phase) {
  if (progress) progress->phase(phase);
}

}  // namespace

Diagnosis diagnose_trace(trace::Trace& trace, const DiagnosisRequest& request, Progress* progress) {
  Diagnosis diagnosis;
  std::vector<Finding> findings;
  int64_t run_ns = 0;
  int64_t run_steps = 0;
  // The whole run's DVDG and memory model, which the steady steps' facts take.
  std::optional<WholeRunModels> whole_run;
  if (!request.whole_run && !request.steps.any() && has_steady_steps(trace)) {
    // The whole run first, for the rules that need it and start-up; its
    // facts share the trace's rows, which limiting to the steps then
    // filters. The rest of its facts go before the steps' are read.
    {
      TraceFacts whole = read_trace_facts(trace, progress);
      LinkModel model = choose_link_model(whole, request.system);
      show(progress, "rules over the whole run");
      run_rules(whole, *model.cost, request.limits, RuleSet::WholeRunOnly, findings);
      run_ns = whole.run_ns();
      run_steps = whole.step_count();
      if (request.with_whole_run) request.with_whole_run(trace, whole);
      whole_run = WholeRunModels{std::move(whole.graph), std::move(whole.memory_model),
                                 std::move(whole.framework_segments), whole.framework};
    }
    show(progress, "finding steps");
    trace.limit_to_steps(trace::StepSelection{std::nullopt, true});
  } else if (request.steps.any()) {
    show(progress, "finding steps");
    trace.limit_to_steps(request.steps);
  }
  TraceFacts facts = whole_run ? read_window_facts(trace, std::move(*whole_run), progress)
                               : read_trace_facts(trace, progress);
  whole_run.reset();
  LinkModel model = choose_link_model(facts, request.system);
  show(progress, "rules");
  bool split = run_ns > 0;
  if (request.untraced_step_ns && facts.ops().steps().empty()) {
    throw TraceError(trace::no_steady_steps_to_price(trace.path(), "--untraced-step"));
  }
  run_rules(facts, *model.cost, request.limits, split ? RuleSet::StepsOnly : RuleSet::Applicable,
            findings, request.untraced_step_ns);
  // Split, the whole run's were given before the steady steps were read.
  if (!split && request.with_whole_run) request.with_whole_run(trace, facts);
  diagnosis.findings = finish_findings(std::move(findings), request.limits,
                                       std::max(run_ns, facts.run_ns()), facts.median_step_ns(), run_steps);
  diagnosis.link_model = model.name;
  diagnosis.time_origin = facts.origin.describe();
  diagnosis.notes = diagnosis_notes(facts, split);
  if (request.analyses) {
    show(progress, "analyses");
    diagnosis.analyses = all_analyses(facts, request.limits);
  }
  return diagnosis;
}

}  // namespace apptracer::diagnose
