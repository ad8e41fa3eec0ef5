// The trace model: one trace, opened once and read through here by every
// analysis. Each table is read at most once, on first use, into packed rows
// (packed_rows.h) that every analysis of the command shares; tables a
// command can stream are streamed instead (stream()). What the rows mean in
// the analyzer's own words (operations, processes, the time origin) is
// derived from them here too: see trace_operations.h (the operations every
// analysis reads), operations.h, processes.h, time_origin.h.
//
//   trace::Trace trace(path, TraceAccess::ReadOnly);
//   for (const trace::Packed<KernelRow>& kernel : trace.rows<KernelRow>()) ...
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/trace/framework_context.h"
#include "analyzer/trace/kernel_arguments.h"
#include "analyzer/trace/processes.h"
#include "analyzer/trace/read_ahead.h"
#include "analyzer/trace/step_window.h"
#include "analyzer/trace/steps.h"
#include "analyzer/trace/table_reader.h"
#include "analyzer/trace/time_origin.h"
#include "analyzer/trace/trace_file.h"
#include "analyzer/trace/trace_operations.h"
#include "analyzer/trace/tracer_time.h"
#include "analyzer/trace/unified_memory.h"

namespace apptracer::trace {

template <typename Row>
using Rows = std::vector<Packed<Row>>;

namespace detail {

// Room for one table's rows once they are read.
template <typename Row>
struct TableSlot {
  std::optional<Rows<Row>> rows;
};
struct NoTable {};
// A slot for every declared table.
struct TableSlots : NoTable
#define APPTRACER_TABLE(sql_name, RowType, table_role, doc) , TableSlot<RowType>
#include "apptracer/tables.def"
{
};

}  // namespace detail

class Trace {
 public:
  // Opens and checks the trace at `path` (trace_file.h); throws TraceError.
  Trace(const std::string& path, TraceAccess access);
  // Reads a database someone else holds open, which must outlive the Trace
  // (tests build their traces in place).
  explicit Trace(Database& db, std::string path = "");
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  const std::string& path() const { return path_; }
  Database& db() { return *db_; }

  // Every row of Row's table, by id (rowid order), read on first use.
  template <typename Row>
  const Rows<Row>& rows() {
    std::optional<Rows<Row>>& slot = static_cast<detail::TableSlot<Row>&>(tables_).rows;
    if (!slot) {
      slot = read_window_rows<Row>();
      keep_window(*slot);
    }
    return *slot;
  }

  // Whether Row's rows are read and held (rows() costs nothing more).
  template <typename Row>
  bool holds_rows() {
    return static_cast<detail::TableSlot<Row>&>(tables_).rows.has_value();
  }

  // Gives Row's rows back; they are read again if asked for: for a command
  // done with a big table before its next phase.
  template <typename Row>
  void release() {
    static_cast<detail::TableSlot<Row>&>(tables_).rows.reset();
  }

  // The row with this id; null when there is none. Row's table has an `id`.
  template <typename Row>
  const Packed<Row>* find(int64_t id) {
    const Rows<Row>& all = rows<Row>();
    auto found = std::lower_bound(all.begin(), all.end(), id,
                                  [](const Packed<Row>& row, int64_t wanted) { return row.id < wanted; });
    return found != all.end() && found->id == id ? &*found : nullptr;
  }

  // visit(row) for each row of Row's table in the order `rest` asks (ORDER
  // BY ...), holding one row at a time: for a command that can stream.
  template <typename Row, typename Visit>
  void stream(std::string_view rest, Visit&& visit) {
    if constexpr (kIsWindowedRow<Row>) {
      if (window_) {
        stream_rows<Row>(*db_, texts_, windowed<Row>(rest), [&](const Packed<Row>& row) {
          if (window_keeps(*window_, row)) visit(row);
        });
        return;
      }
    }
    stream_rows<Row>(*db_, texts_, rest, std::forward<Visit>(visit));
  }
  // The same, decoding only `columns` (the rows' other fields read as zero
  // or none): for a pass that needs a few columns of a large table, as
  // decoding them is most of what reading costs. A trace limited to a window
  // reads whole rows, as the window needs their times.
  template <typename Row, typename Visit>
  void stream_columns(const ColumnNames& columns, std::string_view rest, Visit&& visit) {
    if constexpr (kIsWindowedRow<Row>) {
      if (window_) return stream<Row>(rest, std::forward<Visit>(visit));
    }
    stream_rows<Row>(*db_, texts_, rest, std::forward<Visit>(visit), columns);
  }

  // visit(row) for each row of Row's table: the held rows where the trace
  // holds them (a command that reads them anyway), else streamed, `columns`
  // only (a streaming command need not hold a million kernels' rows for a
  // pass over a few of their columns).
  template <typename Row, typename Visit>
  void each_row(const ColumnNames& columns, Visit&& visit) {
    if (holds_rows<Row>()) {
      for (const Packed<Row>& row : rows<Row>()) visit(row);
      return;
    }
    stream_columns<Row>(columns, "", std::forward<Visit>(visit));
  }

  // A cursor over Row's table in the order `rest` asks, holding one row at a
  // time: for a command merging several tables as it streams them. None
  // when the trace has no such table.
  template <typename Row>
  std::optional<PackedReader<Row>> cursor(std::string_view rest) {
    if (!db_->has_table(Row::kTable)) return std::nullopt;
    return PackedReader<Row>(*db_, texts_, rest);
  }
  // The same, its rows decoded on a thread of its own a few batches ahead
  // (read_ahead.h), and an event table's only within the window: for a
  // command that does work of its own on each row. Null when the trace has
  // no such table.
  template <typename Row>
  std::unique_ptr<ReadAhead<Row>> read_ahead(std::string_view rest) {
    if (!db_->has_table(Row::kTable)) return nullptr;
    return std::make_unique<ReadAhead<Row>>(*db_, texts_, windowed<Row>(rest), ColumnNames{}, window());
  }

  // How many rows a table (or view) holds, counted without reading them: for
  // a command that only says how big a trace is. Throws SqliteError when the
  // trace has no such table.
  int64_t row_count(std::string_view table);
  // How many kernels, copies and memsets have GPU times (are drawn on a
  // timeline), counted without reading them, up to `enough`: past it, the
  // rest are not scanned.
  int64_t timed_gpu_work_count(int64_t enough = INT64_MAX);

  std::string_view text(TextRef ref) const { return texts_.text(ref); }
  // An interned name (strings.id): kernel, function, NVTX range; `fallback`
  // for an id with no text. Negative ids are derived names.
  std::string_view string(std::optional<int64_t> id, std::string_view fallback = "");
  // The id of a name made from the trace's own (a JAX module path taken out
  // of XLA's NVTX names): negative, so no strings.id is one, resolved by
  // string() like those. Equal texts, one id.
  int64_t derived_string(std::string_view text);
  // meta's value for `key`, "" when absent.
  std::string meta(std::string_view key);

  const TraceProcesses& processes();
  // The tracer's own time on the program's threads (tracer_time.h).
  const TracerTime& tracer_time();
  // A row's process; throws TraceError for one the trace does not list (a
  // damaged trace).
  const TraceProcess& process(int64_t process_id);
  const TimeOrigin& origin();
  // Unified-memory events with the operation each belongs to.
  const UmTrace& unified_memory();
  // What each launch's parameter words point into.
  const KernelArguments& kernel_arguments();
  // Which framework module and op issued each piece of work (framework_context.h).
  const FrameworkContexts& framework_contexts();
  // The program's steps (steps.h), found from the whole trace on first use.
  const TraceSteps& steps();
  // Its copies, memsets, kernels, synchronizations, allocations and host
  // calls (trace_operations.h), within the window limit_to_steps chose.
  const TraceOperations& operations();
  // From now on rows(), stream() and read_ahead() of the event tables (step_window.h)
  // hold only the rows issued in `selection`'s steps, whether already read
  // or not. Throws TraceError when the trace has no such steps.
  void limit_to_steps(const StepSelection& selection);
  // What limit_to_steps chose; null for the whole trace.
  const StepWindow* window() const { return window_ ? &*window_ : nullptr; }
  // Gives back every table's rows and what was built over them (operations,
  // kernel arguments, unified memory, framework context), keeping the
  // processes, the steps and the step window: for a command whose largest
  // step needs none of them. Whatever is asked for later is read again.
  void release_rows();

 private:
  // Row's rows, those of a narrow window only (its event tables' rows read
  // in SQL, on one thread: memory and time grow with the steps looked at).
  template <typename Row>
  Rows<Row> read_window_rows() {
    if constexpr (kIsWindowedRow<Row>) {
      if (window_ && window_->narrow() && db_->has_table(Row::kTable)) {
        Rows<Row> rows;
        stream_rows<Row>(*db_, texts_, windowed<Row>("ORDER BY rowid"),
                         [&](const Packed<Row>& row) { rows.push_back(row); });
        return rows;
      }
    }
    return read_rows<Row>(*db_, texts_);
  }

  // `rest` limited in SQL to the window's time, for an event table read
  // under one: the rows outside it are not decoded (a few steps of a long
  // run are a small part of its rows). A `rest` with a WHERE of its own is
  // left as it is; the rows read are filtered all the same.
  template <typename Row>
  std::string windowed(std::string_view rest) const {
    std::string out(rest);
    if constexpr (kIsWindowedRow<Row>) {
      if (window_ && out.rfind("WHERE", 0) != 0) out = window_sql<Row>(*window_) + " " + out;
    }
    return out;
  }

  template <typename Row>
  void keep_window(Rows<Row>& rows) const {
    if constexpr (kIsWindowedRow<Row>) {
      if (!window_) return;
      rows.erase(std::remove_if(rows.begin(), rows.end(),
                                [&](const Packed<Row>& row) { return !window_keeps(*window_, row); }),
                 rows.end());
      // Given back only where the window dropped most of them: a copy of a
      // window that keeps nearly everything (the steady steps of a long run)
      // would hold the rows twice at once.
      if (rows.size() < rows.capacity() / 2) rows.shrink_to_fit();
    }
  }

  Database opened_;  // unless borrowed
  Database* db_;
  std::string path_;
  TextPool texts_;
  std::deque<std::string> derived_;  // derived_string(-1 - i) is derived_[i]
  std::unordered_map<std::string_view, int64_t> derived_ids_;  // keys view derived_
  detail::TableSlots tables_;
  std::optional<TraceProcesses> processes_;
  std::optional<TracerTime> tracer_time_;
  std::optional<TimeOrigin> origin_;
  std::optional<UmTrace> unified_memory_;
  std::optional<KernelArguments> kernel_arguments_;
  std::optional<TraceSteps> steps_;
  std::optional<FrameworkContexts> framework_contexts_;
  std::optional<TraceOperations> operations_;
  std::optional<StepWindow> window_;
};

}  // namespace apptracer::trace
