// The findings a user reads first: none that saves nothing, no saving larger
// than the run it would shorten, wrong results first, then the largest saving
// (a finding the model cannot price by what it costs now; memory findings,
// which cost no time, by the bytes they take off a peak), start-up (paid
// once) after the steady state's, and each one told which others count some
// of the same time.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/diagnose/finding.h"

namespace apptracer::diagnose {

// `run_ns`: how long the traced run(s) lasted (TraceFacts::run_ns).
void rank_findings(std::vector<Finding>& findings, int64_t run_ns);

}  // namespace apptracer::diagnose
