// Sums of values read from a trace, which a damaged or hostile file can set
// to any 64-bit number: in C++ they saturate (apptracer/saturating.h), and so
// do the sums SQL computes for the reports.
#pragma once

#include <optional>
#include <string>

#include "analyzer/trace/nullable_int.h"
#include "apptracer/saturating.h"

namespace apptracer {

// SQL for the sum of `expression` over a group, NULL over no rows: SQLite's
// sum() fails the whole query on an overflow, so this sums as a double
// (exact below 2^53, past any real byte count or duration) and saturates.
inline std::string saturating_sum_sql(const std::string& expression) {
  return "CASE WHEN count(" + expression + ") = 0 THEN NULL ELSE CAST(max(min(total(" +
         expression + "), 9.3e18), -9.3e18) AS INTEGER) END";
}

// How long from `start` to `end` as recorded (negative when the end came
// first, saturating); none when either time is missing.
inline std::optional<int64_t> recorded_ns(trace::NullableInt start, trace::NullableInt end) {
  if (!start || !end) return std::nullopt;
  return saturating_sub(*end, *start);
}

}  // namespace apptracer
