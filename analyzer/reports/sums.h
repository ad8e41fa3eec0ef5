// Arithmetic on values read from a trace, which a damaged or hostile file can
// set to any 64-bit number: sums and differences saturate at the int64 range
// instead of overflowing (undefined behaviour, and nonsense in a report).
#pragma once

#include <cstdint>
#include <string>

namespace apptracer {

inline int64_t clamp_to_int64(__int128 value) {
  if (value > INT64_MAX) return INT64_MAX;
  if (value < INT64_MIN) return INT64_MIN;
  return static_cast<int64_t>(value);
}

inline int64_t saturating_add(int64_t a, int64_t b) {
  return clamp_to_int64(static_cast<__int128>(a) + b);
}

inline int64_t saturating_sub(int64_t a, int64_t b) {
  return clamp_to_int64(static_cast<__int128>(a) - b);
}

// SQL for the sum of `expression` over a group, NULL over no rows: SQLite's
// sum() fails the whole query on an overflow, so this sums as a double
// (exact below 2^53, past any real byte count or duration) and saturates.
inline std::string saturating_sum_sql(const std::string& expression) {
  return "CASE WHEN count(" + expression + ") = 0 THEN NULL ELSE CAST(max(min(total(" +
         expression + "), 9.3e18), -9.3e18) AS INTEGER) END";
}

}  // namespace apptracer
