// Arithmetic on the times, ids and sizes a trace holds. A damaged or hostile
// file can set any of them to any 64-bit number, and the sum or difference of
// two can overflow (undefined behaviour, and nonsense in a report): these
// saturate at the ends of int64 instead, so an extreme value stays extreme
// and never wraps around.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace apptracer {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

constexpr int64_t clamp_to_int64(__int128 value) {
  if (value > kInt64Max) return kInt64Max;
  if (value < kInt64Min) return kInt64Min;
  return static_cast<int64_t>(value);
}

constexpr int64_t saturating_add(int64_t a, int64_t b) {
  return clamp_to_int64(static_cast<__int128>(a) + b);
}

constexpr int64_t saturating_sub(int64_t a, int64_t b) {
  return clamp_to_int64(static_cast<__int128>(a) - b);
}

// How long from `start` to `end`: never negative (an end recorded before its
// start lasts 0 ns), and INT64_MAX at most.
constexpr int64_t elapsed_ns(int64_t start, int64_t end) {
  return end > start ? saturating_sub(end, start) : 0;
}

// `ns` (computed in double from times) rounded to the nearest integer, held
// within int64; NaN is 0.
inline int64_t saturating_round(double ns) {
  if (std::isnan(ns)) return 0;
  if (ns >= 0x1p63) return kInt64Max;
  if (ns <= -0x1p63) return kInt64Min;
  return std::llround(ns);
}

// a + b, or nothing when it does not fit (an id that cannot be shifted).
constexpr std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  __int128 sum = static_cast<__int128>(a) + b;
  if (sum != clamp_to_int64(sum)) return std::nullopt;
  return static_cast<int64_t>(sum);
}

}  // namespace apptracer
