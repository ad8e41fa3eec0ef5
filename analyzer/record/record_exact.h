// `apptracer record --exact`: how the exact data is recorded here, decided by
// a probe (exact_probe.h): one run with the normal capture where CUPTI and the
// Compute Sanitizer work together, else the normal run followed by a second
// run under the sanitizer alone, joined by launch order (exact_join.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analyzer/record/exact_probe.h"

namespace apptracer {

// Variables the traced program gets (beyond LD_PRELOAD).
using Environment = std::vector<std::pair<std::string, std::string>>;

// `requested`: auto, one-run or two-run. Says on stderr which and why.
ExactPath choose_exact_path(const std::string& requested, const std::string& library);

// The second run of the two-run scheme: `command` under the sanitizer alone
// with `environment` (the normal run's), quietly, its traces in a temporary
// directory; each then joins the normal run's trace of the same process
// (`normal`). Returns whether every join worked; says why not on stderr.
bool run_sanitizer_and_join(const std::vector<std::string>& command, const std::string& library,
                            Environment environment, const std::vector<std::string>& normal);

}  // namespace apptracer
