#include "graph_store.h"

#include <sqlite3.h>

#include <stdexcept>
#include <string>

#include "apptracer/saturating.h"
#include "apptracer/tables.h"

namespace apptracer::dvdg {

namespace {

// The dvdg_* tables as tables.def declares them (role Analysis).
const TableInfo& ops_table() { return table_of<DvdgOpRow>(); }
const TableInfo& values_table() { return table_of<DvdgValueRow>(); }
const TableInfo& edges_table() { return table_of<DvdgEdgeRow>(); }

std::string insert_sql(const TableInfo& table, size_t rows) {
  std::string row = "(";
  for (size_t i = 0; i < table.columns.size(); ++i) row += i ? ",?" : "?";
  row += ")";
  std::string sql = "INSERT INTO " + table.name + " VALUES ";
  for (size_t i = 0; i < rows; ++i) sql += (i ? "," : "") + row;
  return sql;
}

// Binds one row's columns of a multi-row INSERT. This is the hot loop of a
// million-operation graph, so it talks to SQLite directly: constant text is
// bound without a copy and nothing is cleared between batches (every column
// is bound every time, NULL included).
class RowBinder {
 public:
  RowBinder(sqlite3_stmt* statement, int first) : statement_(statement), first_(first + 1), next_(first + 1) {}

  int bound() const { return next_ - first_; }

  RowBinder& integer(int64_t value) {
    return check(sqlite3_bind_int64(statement_, next_++, value));
  }
  RowBinder& optional(bool present, int64_t value) {
    return check(present ? sqlite3_bind_int64(statement_, next_++, value)
                         : sqlite3_bind_null(statement_, next_++));
  }
  RowBinder& constant_text(std::string_view text) {
    return check(sqlite3_bind_text(statement_, next_++, text.data(), static_cast<int>(text.size()),
                                   SQLITE_STATIC));
  }
  RowBinder& optional_text(bool present, std::string_view text) {
    return present ? constant_text(text) : check(sqlite3_bind_null(statement_, next_++));
  }

 private:
  RowBinder& check(int rc) {
    if (rc != SQLITE_OK) throw SqliteError(std::string("bind: ") + sqlite3_errstr(rc));
    return *this;
  }
  sqlite3_stmt* statement_;
  int first_;
  int next_;
};

class PreparedInsert {
 public:
  PreparedInsert(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &statement_, nullptr) !=
        SQLITE_OK) {
      throw SqliteError(std::string("cannot prepare statement: ") + sqlite3_errmsg(db));
    }
  }
  ~PreparedInsert() { sqlite3_finalize(statement_); }
  PreparedInsert(const PreparedInsert&) = delete;
  PreparedInsert& operator=(const PreparedInsert&) = delete;

  sqlite3_stmt* get() const { return statement_; }
  void run() {
    if (sqlite3_step(statement_) != SQLITE_DONE) {
      throw SqliteError(std::string("insert failed: ") + sqlite3_errmsg(db_));
    }
    sqlite3_reset(statement_);
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* statement_ = nullptr;
};

// Inserts `count` rows several at a time: a multi-row INSERT costs little
// more than a single-row one. bind_row(binder, row) binds every column, in
// the order tables.def declares them.
template <typename BindRow>
void insert_rows(Database& db, const TableInfo& table, size_t count, BindRow&& bind_row) {
  constexpr size_t kRowsPerBatch = 32;
  const int columns = static_cast<int>(table.columns.size());
  auto bind = [&](sqlite3_stmt* statement, size_t k, size_t row) {
    RowBinder binder(statement, static_cast<int>(k) * columns);
    bind_row(binder, row);
    if (binder.bound() != columns) {
      throw std::logic_error("dvdg store: " + std::to_string(binder.bound()) + " columns bound for " +
                             table.name + ", which has " + std::to_string(columns));
    }
  };
  size_t row = 0;
  if (count >= kRowsPerBatch) {
    PreparedInsert batch(db.handle(), insert_sql(table, kRowsPerBatch));
    for (; row + kRowsPerBatch <= count; row += kRowsPerBatch) {
      for (size_t k = 0; k < kRowsPerBatch; ++k) bind(batch.get(), k, row + k);
      batch.run();
    }
  }
  if (row < count) {
    PreparedInsert rest(db.handle(), insert_sql(table, count - row));
    for (size_t k = 0; row + k < count; ++k) bind(rest.get(), k, row + k);
    rest.run();
  }
}

void store_ops(Database& db, const Graph& graph) {
  insert_rows(db, ops_table(), graph.ops.size(), [&](RowBinder& row, size_t i) {
    const Op& op = graph.ops[i];
    bool migration = op.kind == OpKind::Migration;
    bool collective = op.kind == OpKind::Collective || op.kind == OpKind::Message;
    bool moves_bytes =
        op.kind == OpKind::Copy || op.kind == OpKind::Memset || migration || collective;
    row.integer(static_cast<int64_t>(i + 1))
        .constant_text(to_string(op.kind))
        .integer(op.source_id)
        .optional(op.kind == OpKind::Copy, static_cast<int64_t>(op.copy_kind))
        .optional(op.name_id != 0, op.name_id)
        .optional(op.device.has_value(), op.device.value_or(0))
        .optional(op.stream.has_value(), op.stream.value_or(0))
        .integer(op.issue_ns)
        .integer(op.start_ns)
        .integer(op.end_ns)
        .optional(moves_bytes, op.bytes)
        .integer(op.reads_uninitialized)
        .integer(op.arguments_unknown)
        .optional(op.caused_by != Op::kNoOp, int64_t{op.caused_by} + 1)
        .optional(migration, op.from)
        .optional(migration, op.to)
        .optional_text(migration, to_string(static_cast<UmMigrationCause>(op.migration_cause)))
        .optional(collective, static_cast<int64_t>(op.collective_kind))
        .optional(collective, op.ranks_missing)
        .optional(op.runs_collective != Op::kNoOp, int64_t{op.runs_collective} + 1);
  });
}

void store_values(Database& db, const Graph& graph) {
  insert_rows(db, values_table(), graph.values.size(), [&](RowBinder& row, size_t i) {
    const Value& value = graph.values[i];
    const Location& location = graph.locations[value.location];
    row.integer(static_cast<int64_t>(i + 1))
        .optional(location.alloc_id.has_value(), location.alloc_id.value_or(0))
        .integer(saturating_add(location.address, value.offset))
        .integer(value.bytes)
        .optional(location.device.has_value(), location.device.value_or(0))
        .integer(static_cast<int64_t>(location.memory))
        .integer(value.version)
        .optional(value.producer_op != Value::kNoOp, int64_t{value.producer_op} + 1)
        .optional(value.freed_by_op != Value::kNoOp, int64_t{value.freed_by_op} + 1)
        .integer(value.holds_data)
        .integer(value.read_uninitialized)
        .optional(value.residency != kNoResidency, value.residency)
        .optional(location.sub_allocation_id.has_value(), location.sub_allocation_id.value_or(0))
        .integer(value.offset)
        .integer(location.exchanged);
  });
}

void store_edges(Database& db, const Graph& graph) {
  insert_rows(db, edges_table(), graph.edges.size(), [&](RowBinder& row, size_t i) {
    const Edge& edge = graph.edges[i];
    row.integer(int64_t{edge.src_value} + 1)
        .integer(int64_t{edge.dst_value} + 1)
        .integer(int64_t{edge.op} + 1)
        .constant_text(to_string(edge.kind))
        .optional(edge.bytes >= 0, edge.bytes)
        .integer(edge.uninitialized_read);
  });
}

}  // namespace

std::string dvdg_tables_sql() {
  return create_table_sql(ops_table()) + create_table_sql(values_table()) +
         create_table_sql(edges_table());
}

void store_graph(Database& db, const Graph& graph) {
  with_transaction(db, [&] {
    db.exec(
        "DROP TABLE IF EXISTS dvdg_edges; DROP TABLE IF EXISTS dvdg_values; "
        "DROP TABLE IF EXISTS dvdg_ops;");
    db.exec(dvdg_tables_sql());
    store_ops(db, graph);
    store_values(db, graph);
    store_edges(db, graph);
  });
}

}  // namespace apptracer::dvdg
