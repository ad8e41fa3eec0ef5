// The findings a user reads first: none that saves nothing, no saving larger
// than the run it would shorten, wrong results first, then the largest saving
// (memory findings, which cost no time, by the bytes they take off a peak),
// then the findings the model cannot price (by what they cost now), so that
// they never push a priced one out of the first screen, start-up (paid once)
// after the steady state's, and last the minor ones, which save less per
// step than a step's time varies, happened once, or save memory on a GPU with
// room to spare (memory_rules.cpp); each one told which others count some of
// the same time.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/diagnose/finding.h"

namespace apptracer::diagnose {

// What a finding about the steps must save per step not to be minor: a
// share of the median step, and a larger one for a finding that happened
// in fewer than a quarter of the steps. A finding about the whole run (the
// data-flow rules') is about as many steps as the run held.
struct StepNoise {
  int64_t step_ns = 0;  // the median step; 0: no steps, nothing is minor
  double share = 0.0;
  double one_off_share = 0.0;
  int64_t run_steps = 0;  // the steps of the whole run; 0: its findings are never minor
};

// `run_ns`: how long the traced run(s) lasted (TraceFacts::run_ns).
void rank_findings(std::vector<Finding>& findings, int64_t run_ns, const StepNoise& noise = {});

}  // namespace apptracer::diagnose
