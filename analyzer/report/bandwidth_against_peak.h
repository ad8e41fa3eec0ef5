// Copies' bandwidth beside their path's peak, as the report shows them: the
// peak (the link model's rate for a 1 GiB copy), why a copy went faster than
// it where one did, and a rate over the copies' busy time instead of a peak
// of time bins over the whole trace (mostly idle, so far below the mean).
#pragma once

#include <optional>
#include <string>

#include "analyzer/diagnose/trace_facts.h"
#include "analyzer/diagnose/transfer_cost.h"
#include "analyzer/table/table.h"

namespace apptracer::report {

// The fastest a path goes: the model's bandwidth for a 1 GiB copy (GB/s).
std::optional<double> peak_gbps(const diagnose::TransferCost& cost, const diagnose::TransferPath& path);

// Why `achieved_gbps` on `path` exceeds `peak` (by more than 1%); empty when
// it does not or there is no peak.
std::string above_peak_reason(const diagnose::TransferCost& cost, const diagnose::TransferPath& path,
                              double achieved_gbps, std::optional<double> peak);

// The quantile of copy bandwidth over busy time: the rate the copies ran at
// or below for that share of their GPU time.
inline constexpr double kBusyTimeQuantile = 0.95;

// Holistic Trace Analysis's memory bandwidth summary (analyses.h), per copy
// direction: count, bytes, GPU time, mean GB/s (bytes over GPU time) and,
// in place of its peak over 1% time bins, the kBusyTimeQuantile rate over
// the copies' GPU time.
Table copy_bandwidth(const diagnose::TraceFacts& facts);

}  // namespace apptracer::report
