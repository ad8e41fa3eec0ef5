// The vocabulary of tables.def: what a column holds (its C++ type, which
// gives its SQL type and nullability) and what its values mean (its role,
// which says how `merge` remaps it, how the Python API decodes it, and how
// the schema documentation describes it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "apptracer/enums.h"

namespace apptracer {

// Column types. A struct field of the row type has exactly this type.
using I64 = int64_t;                   // INTEGER NOT NULL
using OptI64 = std::optional<int64_t>;  // INTEGER
using Real = double;                   // REAL NOT NULL
using OptReal = std::optional<double>;  // REAL
using Text = std::string;              // TEXT NOT NULL
using OptText = std::optional<std::string>;  // TEXT
// INTEGER PRIMARY KEY: unset on insert means "the next id".
struct RowId {
  std::optional<int64_t> value;
  RowId() = default;
  RowId(int64_t v) : value(v) {}  // NOLINT: a row id is an integer
};
// TEXT PRIMARY KEY.
struct TextKey {
  std::string value;
  TextKey() = default;
  TextKey(std::string v) : value(std::move(v)) {}  // NOLINT
};
// Nullable enum columns; enum columns themselves are INTEGER NOT NULL.
template <typename E>
using Opt = std::optional<E>;

// What a column's values are.
enum class ColumnRole : uint8_t {
  Plain,        // a number with no further meaning to the tools
  Id,           // this table's row id
  Ref,          // a row id of the table named by `target`
  Key,          // part of the table's key (text or composite)
  Enum,         // a value of the enum named by `target` (see enum_values)
  String,       // an id in `strings`
  Correlation,  // a CUPTI correlation id (api_calls.correlation_id)
  Tid,          // an OS thread id
  Stream,       // a CUPTI stream id
  Device,       // a CUDA device ordinal
  Time,         // nanoseconds on the trace clock (CUPTI's)
  Duration,     // nanoseconds
  Address,      // a virtual address, host or device
  Bytes,        // a size in bytes
  Handle,       // an opaque handle (event, function, graph, communicator)
  Process,      // merged traces: processes.process_id
};

struct ColumnMeaning {
  ColumnRole role = ColumnRole::Plain;
  const char* target = nullptr;  // Ref: the table; Enum: filled in from the type
};

// Short spellings for tables.def.
namespace role {
constexpr ColumnMeaning plain() { return {ColumnRole::Plain}; }
constexpr ColumnMeaning id() { return {ColumnRole::Id}; }
constexpr ColumnMeaning ref(const char* table) { return {ColumnRole::Ref, table}; }
constexpr ColumnMeaning key() { return {ColumnRole::Key}; }
constexpr ColumnMeaning value() { return {ColumnRole::Enum}; }  // an enum column
constexpr ColumnMeaning string() { return {ColumnRole::String}; }
constexpr ColumnMeaning correlation() { return {ColumnRole::Correlation}; }
constexpr ColumnMeaning tid() { return {ColumnRole::Tid}; }
constexpr ColumnMeaning stream() { return {ColumnRole::Stream}; }
constexpr ColumnMeaning device() { return {ColumnRole::Device}; }
constexpr ColumnMeaning time() { return {ColumnRole::Time}; }
constexpr ColumnMeaning duration() { return {ColumnRole::Duration}; }
constexpr ColumnMeaning address() { return {ColumnRole::Address}; }
constexpr ColumnMeaning bytes() { return {ColumnRole::Bytes}; }
constexpr ColumnMeaning handle() { return {ColumnRole::Handle}; }
constexpr ColumnMeaning process() { return {ColumnRole::Process}; }
}  // namespace role

std::string_view to_string(ColumnRole role);

// SQL type, nullability and enum name of a column's C++ type.
template <typename T>
struct ColumnType;

template <>
struct ColumnType<I64> {
  static constexpr const char* sql = "INTEGER NOT NULL";
  static constexpr const char* enum_name = nullptr;
};
template <>
struct ColumnType<OptI64> {
  static constexpr const char* sql = "INTEGER";
  static constexpr const char* enum_name = nullptr;
};
template <>
struct ColumnType<Real> {
  static constexpr const char* sql = "REAL NOT NULL";
  static constexpr const char* enum_name = nullptr;
};
template <>
struct ColumnType<OptReal> {
  static constexpr const char* sql = "REAL";
  static constexpr const char* enum_name = nullptr;
};
template <>
struct ColumnType<Text> {
  static constexpr const char* sql = "TEXT NOT NULL";
  static constexpr const char* enum_name = nullptr;
};
template <>
struct ColumnType<OptText> {
  static constexpr const char* sql = "TEXT";
  static constexpr const char* enum_name = nullptr;
};
template <>
struct ColumnType<RowId> {
  static constexpr const char* sql = "INTEGER PRIMARY KEY";
  static constexpr const char* enum_name = nullptr;
};
template <>
struct ColumnType<TextKey> {
  static constexpr const char* sql = "TEXT PRIMARY KEY";
  static constexpr const char* enum_name = nullptr;
};
template <typename E>
struct ColumnType<std::optional<E>> {
  static_assert(std::is_enum_v<E>, "nullable columns are OptI64, OptReal, OptText or Opt<Enum>");
  static constexpr const char* sql = "INTEGER";
  static constexpr const char* enum_name = EnumInfo<E>::name;
};
template <typename E>
struct ColumnType {
  static_assert(std::is_enum_v<E>, "column types: I64, OptI64, Real, OptReal, Text, OptText, "
                                   "RowId, TextKey, an enum or Opt<Enum>");
  static constexpr const char* sql = "INTEGER NOT NULL";
  static constexpr const char* enum_name = EnumInfo<E>::name;
};

}  // namespace apptracer
