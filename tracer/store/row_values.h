// A record's fields as column values: NULL where the record says "none"
// (a device of -1, a stream of -1, an id or handle of 0).
#pragma once

#include <cstdint>
#include <optional>

namespace apptracer {

inline std::optional<int64_t> optional_device(int32_t device) {
  if (device < 0) return std::nullopt;
  return device;
}

inline std::optional<int64_t> optional_nonzero(uint64_t value) {
  if (value == 0) return std::nullopt;
  return static_cast<int64_t>(value);
}

inline std::optional<int64_t> optional_stream(int64_t stream) {
  if (stream < 0) return std::nullopt;
  return stream;
}

inline int64_t as_int(uint64_t value) { return static_cast<int64_t>(value); }

// What a row already has, else `value`.
template <typename T>
std::optional<int64_t> keep_or(const std::optional<int64_t>& kept, T value) {
  return kept ? kept : std::optional<int64_t>(value);
}

}  // namespace apptracer
