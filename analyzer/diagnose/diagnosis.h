// A trace's diagnosis as `apptracer diagnose` and the report make it: where
// the program has steps and no steps were chosen, the rules look at its
// steady steps (savings per step and over them), the rules needing the whole
// run (data flow) at the whole run, and start-up is one finding of its own,
// listed after the steady state's; chosen steps (--steps, --steady) limit
// every rule that can be limited; without steps (or asked to), the whole run.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/diagnose/finding.h"
#include "analyzer/diagnose/rules.h"
#include "analyzer/progress.h"
#include "analyzer/table/table.h"
#include "analyzer/trace/step_window.h"
#include "analyzer/trace/trace.h"

namespace apptracer::diagnose {

struct TraceFacts;

struct DiagnosisRequest {
  std::string system;             // system file for the link model; "" for the trace's own
  trace::StepSelection steps;     // none chosen: the steady steps, where the trace has any
  bool whole_run = false;         // the whole run, start-up included, even where it has steps
  Thresholds limits;
  bool analyses = false;          // also the HTA tables (analyses.h), over what the rules saw
  // The steady step measured without tracing (--untraced-step): where a
  // saving removes the host's time, it is priced against it (RuleContext).
  std::optional<int64_t> untraced_step_ns;
  // Called once with the facts the rules read and the trace they read them
  // from: the whole run's, while both are whole, or, when `steps` limits
  // the diagnosis, those steps'. For a caller that reads them too (the
  // report), so they are read once.
  std::function<void(trace::Trace&, const TraceFacts&)> with_whole_run;
};

struct Diagnosis {
  std::vector<Finding> findings;  // ranked
  std::vector<std::string> notes;
  std::string link_model;
  std::string time_origin;
  std::vector<Table> analyses;
};

// Throws SqliteError on a damaged trace, std::runtime_error on an unusable
// system file, TraceError when chosen steps are not in the trace (or an
// untraced step is given for a trace without steps).
Diagnosis diagnose_trace(trace::Trace& trace, const DiagnosisRequest& request,
                         Progress* progress = nullptr);

}  // namespace apptracer::diagnose
