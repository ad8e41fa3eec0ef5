// The rows the model holds, generated from tables.def: Packed<KernelRow> has
// a field per column of `kernels`, named as the column is, in a compact
// form (a nullable integer in 8 bytes, a launch's sizes at the narrower
// width the tracer records them in, text as a TextRef into the trace's
// pool), plus the process the row belongs to. A column added to tables.def
// reaches every analysis through here unasked.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>

#include "analyzer/trace/nullable_int.h"
#include "analyzer/trace/text_pool.h"
#include "apptracer/tables.h"

namespace apptracer::trace {

// A merged trace's process (processes.process_id, from 1); a single
// process's trace is process 1.
using ProcessId = uint16_t;
inline constexpr ProcessId kSingleProcess = 1;

template <typename Column>
inline constexpr bool kIsTextColumn =
    std::is_same_v<Column, Text> || std::is_same_v<Column, OptText> || std::is_same_v<Column, TextKey>;

// How a column of each declared type (column_types.h) is held: numbers,
// enums and nullable enums (2 bytes) as they are.
template <typename Column>
using PackedColumn = std::conditional_t<
    std::is_same_v<Column, OptI64>, NullableInt,
    std::conditional_t<std::is_same_v<Column, RowId>, int64_t,
                       std::conditional_t<kIsTextColumn<Column>, TextRef, Column>>>;

// A launch column (tables.def's APPTRACER_LAUNCH_COLUMN) is held at the
// width of the C type the tracer records it in: a nullable integer
// recorded narrower as a NullableNarrowInt of that type (NULL and a
// damaged trace's value out of its range: nullable_int.h), any other as
// its column type says.
template <typename Column, typename Recorded>
using PackedLaunchColumn =
    std::conditional_t<std::is_same_v<Column, OptI64> && kHeldNarrow<Recorded>, NullableNarrowInt<Recorded>,
                       PackedColumn<Column>>;

template <typename Row>
struct Packed;

#define APPTRACER_TABLE(sql_name, RowType, table_role, doc) \
  template <>                                              \
  struct Packed<RowType> {                                 \
    using Row = RowType;                                   \
    ProcessId process = kSingleProcess;
#define APPTRACER_COLUMN(name, type, meaning, doc) PackedColumn<type> name{};
#define APPTRACER_LAUNCH_COLUMN(name, type, record_type, meaning, doc) \
  PackedLaunchColumn<type, record_type> name{};
#define APPTRACER_END_TABLE() \
  }                           \
  ;
#include "apptracer/tables.def"

// for_each_column(packed, f): f(field) for each column, in declaration
// order (the row's process is no column).
#define APPTRACER_TABLE(sql_name, RowType, table_role, doc)                                   \
  template <typename P, typename F>                                                          \
  std::enable_if_t<std::is_same_v<std::remove_const_t<P>, Packed<RowType>>> for_each_column( \
      P& row, F&& f) {
#define APPTRACER_COLUMN(name, type, meaning, doc) f(row.name);
#define APPTRACER_END_TABLE() }
#include "apptracer/tables.def"

}  // namespace apptracer::trace
