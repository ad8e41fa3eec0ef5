// Looking at some steps of a trace (--steps A-B, --steady): a window of time
// per process, from the first chosen step's start to the last one's end
// (steps.h). Limited to it (Trace::limit_to_steps), the trace model's event
// rows (API calls, copies, memsets, kernels, synchronizations, stream
// events, unified-memory events, memory advice, collectives) are those issued
// inside it, so every analysis reading them sees only those steps. Tensor
// blocks are those live at some time in it (made before it or in it): the
// steps use memory made before them, and a long run's blocks freed before
// or made after them are most of its rows. Allocations and NVTX ranges stay
// whole.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "analyzer/trace/packed_rows.h"
#include "analyzer/trace/steps.h"

namespace apptracer::trace {

// Which steps: numbers first..last, or every steady step; nothing chosen:
// the whole trace.
struct StepSelection {
  std::optional<std::pair<int64_t, int64_t>> numbers;
  bool steady = false;

  bool any() const { return numbers || steady; }
  bool chooses(const Step& step) const;
  // "steps 100-200", "steady steps".
  std::string describe() const;
};

// The one-line error of an option that prices the steady steps
// (--untraced-step) on the trace at `path`, which has none.
std::string no_steady_steps_to_price(const std::string& path, const std::string& option);

// "A-B" or "N" (A <= B, both >= 0); throws std::invalid_argument with a
// one-line message otherwise.
std::pair<int64_t, int64_t> parse_step_numbers(std::string_view text);

class StepWindow {
 public:
  // The window of `selection` in each process that has such steps. Throws
  // TraceError naming `path` when no process has any.
  StepWindow(const TraceSteps& steps, const StepSelection& selection, const std::string& path);

  bool holds(ProcessId process, int64_t ns) const;
  // The process's window [start, end); none when it has no chosen step.
  std::optional<std::pair<int64_t, int64_t>> span(ProcessId process) const;
  // "steps 3-10 (NVTX ranges "step" ...)": for an output's header.
  const std::string& describe() const { return description_; }
  // "WHERE <event time> >= A AND <event time> < B" over the processes'
  // windows together (`event_time` an SQL expression, kEventTimeSql): reading
  // only the rows it may hold, where the table is large and the window short.
  // holds() still decides, as a merged trace's processes have windows of
  // their own.
  std::string sql_filter(std::string_view event_time) const;
  // Whether [start, end) meets the process's window: a tensor block live
  // at some time in it.
  bool overlaps(ProcessId process, int64_t start, int64_t end) const;
  // "WHERE <start> < B AND (<end> IS NULL OR <end> > A)" over the processes'
  // windows together: the rows whose lifetime may meet it (`start` and
  // `end` SQL columns, kLifetimeSql; a NULL end is alive to the end).
  std::string sql_lifetime_filter(std::string_view start, std::string_view end) const;
  // Whether the chosen steps are under half of the trace's: reading only
  // their rows beats reading every row on several threads and dropping most.
  bool narrow() const { return narrow_; }

 private:
  std::map<ProcessId, std::pair<int64_t, int64_t>> spans_;  // [start, end)
  // The span every process's window lies in.
  std::pair<int64_t, int64_t> all_processes() const;

  std::string description_;
  bool narrow_ = false;
};

// When an event row was issued (the operations' convention for copies,
// memsets and kernels: the API call, else the GPU start); rows of other
// tables are not limited. Each table's is declared once, by the columns it
// is taken from, the first not NULL (0 when none): event_ns(row) reads them,
// and kEventTimeSql<Row> says the same in SQL, which limits a read to a
// window (StepWindow::sql_filter) before its rows are decoded. The SQL only
// narrows the read (event_ns decides each row read); a test holds it to
// losing none.
template <typename Row>
inline constexpr const char* kEventTimeSql = nullptr;

namespace detail {
inline int64_t first_set(int64_t value) { return value; }
inline int64_t first_set(NullableInt value) { return value.value_or(0); }
inline int64_t first_set(NullableInt value, NullableInt otherwise) { return value.value_or(otherwise.value_or(0)); }
}  // namespace detail

#define APPTRACER_EVENT_TIME(RowType, column)                                              \
  inline int64_t event_ns(const Packed<RowType>& row) { return detail::first_set(row.column); } \
  template <>                                                                              \
  inline constexpr const char* kEventTimeSql<RowType> = "COALESCE(" #column ", 0)";
#define APPTRACER_EVENT_TIME_OR(RowType, column, otherwise)                                \
  inline int64_t event_ns(const Packed<RowType>& row) {                                    \
    return detail::first_set(row.column, row.otherwise);                                   \
  }                                                                                        \
  template <>                                                                              \
  inline constexpr const char* kEventTimeSql<RowType> = "COALESCE(" #column ", " #otherwise ", 0)";
APPTRACER_EVENT_TIME(ApiCallRow, start_ns)
APPTRACER_EVENT_TIME_OR(MemcpyRow, api_start_ns, gpu_start_ns)
APPTRACER_EVENT_TIME_OR(MemsetRow, api_start_ns, gpu_start_ns)
APPTRACER_EVENT_TIME_OR(KernelRow, api_start_ns, gpu_start_ns)
APPTRACER_EVENT_TIME(SyncRow, start_ns)
APPTRACER_EVENT_TIME(StreamEventRow, ns)
APPTRACER_EVENT_TIME_OR(UmEventRow, start_ns, end_ns)
APPTRACER_EVENT_TIME(MemAdviceRow, ns)
APPTRACER_EVENT_TIME(CollectiveRow, api_start_ns)
#undef APPTRACER_EVENT_TIME
#undef APPTRACER_EVENT_TIME_OR

// A tensor block's lifetime: made, then back in its pool (or alive to the
// end); and the same two columns in SQL.
inline std::pair<int64_t, int64_t> lifetime_ns(const Packed<SubAllocationRow>& row) {
  return {row.alloc_ns, row.free_ns.value_or(INT64_MAX)};
}
template <typename Row>
inline constexpr std::pair<const char*, const char*> kLifetimeSql{nullptr, nullptr};
template <>
inline constexpr std::pair<const char*, const char*> kLifetimeSql<SubAllocationRow>{"alloc_ns", "free_ns"};

template <typename Row, typename = void>
inline constexpr bool kIsLifetimeRow = false;
template <typename Row>
inline constexpr bool kIsLifetimeRow<Row, std::void_t<decltype(lifetime_ns(std::declval<const Packed<Row>&>()))>> =
    true;

template <typename Row, typename = void>
inline constexpr bool kIsEventRow = false;
template <typename Row>
inline constexpr bool kIsEventRow<Row, std::void_t<decltype(event_ns(std::declval<const Packed<Row>&>()))>> = true;

// The rows a window limits: event rows by when they were issued, tensor
// blocks by their lifetime.
template <typename Row>
inline constexpr bool kIsWindowedRow = kIsEventRow<Row> || kIsLifetimeRow<Row>;

template <typename Row>
bool window_keeps(const StepWindow& window, const Packed<Row>& row) {
  if constexpr (kIsEventRow<Row>) {
    return window.holds(row.process, event_ns(row));
  } else {
    auto [start, end] = lifetime_ns(row);
    return window.overlaps(row.process, start, end);
  }
}

// The same in SQL, over the processes' windows together (a superset where
// they differ: window_keeps still decides).
template <typename Row>
std::string window_sql(const StepWindow& window) {
  if constexpr (kIsEventRow<Row>) {
    return window.sql_filter(kEventTimeSql<Row>);
  } else {
    return window.sql_lifetime_filter(kLifetimeSql<Row>.first, kLifetimeSql<Row>.second);
  }
}

}  // namespace apptracer::trace
