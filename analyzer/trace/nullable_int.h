// An INTEGER column that may be NULL, held in 8 bytes where
// std::optional<int64_t> takes 16: the model keeps millions of rows, most of
// whose columns may be NULL. NULL is INT64_MIN, which no id, time, size,
// device, stream or address of a trace is; a damaged trace's INT64_MIN is
// held as INT64_MIN + 1, as extreme (saturating arithmetic treats both
// alike) and still a value.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

namespace apptracer::trace {

// What each nullable integer below reads as: a value of `Stored`, NULL
// where it is `kNull`. Read as int64_t, a column's type.
template <typename Stored, Stored kNull>
class NullableStorage {
 public:
  constexpr bool has_value() const { return value_ != kNull; }
  constexpr explicit operator bool() const { return has_value(); }
  // Only when has_value().
  constexpr int64_t operator*() const { return value_; }
  constexpr int64_t value_or(int64_t fallback) const { return has_value() ? value_ : fallback; }
  constexpr std::optional<int64_t> optional() const {
    return has_value() ? std::optional<int64_t>(value_) : std::nullopt;
  }
  operator std::optional<int64_t>() const { return optional(); }  // NOLINT

 protected:
  constexpr NullableStorage() = default;
  constexpr explicit NullableStorage(Stored value) : value_(value) {}

  Stored value_ = kNull;
};

class NullableInt : public NullableStorage<int64_t, INT64_MIN> {
 public:
  constexpr NullableInt() = default;
  constexpr NullableInt(std::nullopt_t) {}  // NOLINT: as std::optional
  constexpr NullableInt(int64_t value)      // NOLINT
      : NullableStorage(value == INT64_MIN ? INT64_MIN + 1 : value) {}
  constexpr NullableInt(const std::optional<int64_t>& value)  // NOLINT
      : NullableInt(value ? NullableInt(*value) : NullableInt()) {}

  friend constexpr bool operator==(NullableInt a, NullableInt b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(NullableInt a, NullableInt b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(NullableInt a, NullableInt b) { return a.value_ < b.value_; }
};

// Whether a recorded C type is held as a NullableNarrowInt of it: unsigned
// and narrower than a column's int64_t.
template <typename Declared>
inline constexpr bool kHeldNarrow = std::is_unsigned_v<Declared> && sizeof(Declared) < sizeof(int64_t);

// A nullable INTEGER column the tracer records in a narrower unsigned C
// type (a launch's sizes, uint32_t), held at that width. NULL is the type's
// largest value, which no launch gives (CUDA caps a grid's x at 2^31 - 1
// and every other size lower). A damaged trace's value the width cannot
// hold (negative, or from the largest value up) reads as NULL: a size no
// launch could have had, as unknown as a missing one.
template <typename Declared>
class NullableNarrowInt : public NullableStorage<Declared, std::numeric_limits<Declared>::max()> {
  static_assert(kHeldNarrow<Declared>, "a narrower unsigned type, whose values all fit an int64_t");
  static constexpr Declared kNull = std::numeric_limits<Declared>::max();
  using Storage = NullableStorage<Declared, kNull>;

 public:
  constexpr NullableNarrowInt() = default;
  constexpr NullableNarrowInt(std::nullopt_t) {}  // NOLINT: as std::optional
  constexpr NullableNarrowInt(int64_t value)      // NOLINT
      : Storage(value >= 0 && value < int64_t{kNull} ? static_cast<Declared>(value) : kNull) {}
  constexpr operator NullableInt() const {  // NOLINT
    return this->has_value() ? NullableInt(int64_t{this->value_}) : NullableInt();
  }

  friend constexpr bool operator==(NullableNarrowInt a, NullableNarrowInt b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(NullableNarrowInt a, NullableNarrowInt b) { return a.value_ != b.value_; }
};

}  // namespace apptracer::trace
