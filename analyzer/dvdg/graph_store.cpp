#include "analyzer/dvdg/graph_store.h"

#include <sqlite3.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "apptracer/saturating.h"
#include "apptracer/tables.h"

namespace apptracer::dvdg {

namespace {

// The dvdg_* tables and view as tables.def declares them (role Analysis).
const TableInfo& ops_table() { return table_of<DvdgOpRow>(); }
const TableInfo& values_table() { return table_of<DvdgValueRow>(); }
const TableInfo& op_values_table() { return table_of<DvdgOpValueRow>(); }
const TableInfo& listed_edges_table() { return table_of<DvdgListedEdgeRow>(); }
constexpr const char* kEdgesView = "dvdg_edges";

const ViewInfo& edges_view() {
  for (const ViewInfo& view : all_views()) {
    if (view.name == kEdgesView) return view;
  }
  throw std::logic_error("tables.def declares no dvdg_edges view");
}

// Drops `name`, a table or (dvdg_edges before it was a view) a view.
void drop(Database& db, const std::string& name) {
  std::string type;
  {
    Statement query = db.prepare("SELECT type FROM sqlite_master WHERE name = ?");
    query.bind(1, name);
    if (!query.step()) return;
    type = query.text(0);
  }
  db.exec((type == "view" ? "DROP VIEW " : "DROP TABLE ") + name);
}

std::string insert_sql(const TableInfo& table, size_t rows) {
  std::string row = "(";
  for (size_t i = 0; i < table.columns.size(); ++i) row += i ? ",?" : "?";
  row += ")";
  std::string sql = "INSERT INTO " + table.name + " VALUES ";
  for (size_t i = 0; i < rows; ++i) sql += (i ? "," : "") + row;
  return sql;
}

// One row's columns of a multi-row INSERT, in the order tables.def
// declares them. Constant text is kept without a copy (it is bound as
// static): the kinds' names.
struct Cell {
  enum class Type : uint8_t { Integer, Null, Text };
  Type type = Type::Null;
  int64_t integer = 0;
  std::string_view text;
};

class RowBinder {
 public:
  explicit RowBinder(std::vector<Cell>& cells) : cells_(cells) {}

  RowBinder& integer(int64_t value) { return add({Cell::Type::Integer, value, {}}); }
  RowBinder& optional(bool present, int64_t value) {
    return add(present ? Cell{Cell::Type::Integer, value, {}} : Cell{});
  }
  RowBinder& constant_text(std::string_view text) { return add({Cell::Type::Text, 0, text}); }
  RowBinder& optional_text(bool present, std::string_view text) {
    return add(present ? Cell{Cell::Type::Text, 0, text} : Cell{});
  }

 private:
  RowBinder& add(const Cell& cell) {
    cells_.push_back(cell);
    return *this;
  }
  std::vector<Cell>& cells_;
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

// Inserts rows several at a time: a multi-row INSERT costs little more than
// a single-row one. This is the hot loop of a million-operation graph, so it
// talks to SQLite directly, and nothing is cleared between batches (every
// column is bound every time, NULL included).
class BatchInsert {
 public:
  BatchInsert(Database& db, const TableInfo& table)
      : db_(db), table_(table), columns_(table.columns.size()),
        batch_(db.handle(), insert_sql(table, kRowsPerBatch)) {
    cells_.reserve(kRowsPerBatch * columns_);
  }

  // bind_row(RowBinder&) binds one row's every column.
  template <typename BindRow>
  void add(BindRow&& bind_row) {
    size_t before = cells_.size();
    RowBinder binder(cells_);
    bind_row(binder);
    if (cells_.size() - before != columns_) {
      throw std::logic_error("dvdg store: " + std::to_string(cells_.size() - before) +
                             " columns bound for " + table_.name + ", which has " +
                             std::to_string(columns_));
    }
    if (cells_.size() == kRowsPerBatch * columns_) run(batch_);
  }

  // Inserts the rows of the last, partial batch.
  void finish() {
    if (cells_.empty()) return;
    PreparedInsert rest(db_.handle(), insert_sql(table_, cells_.size() / columns_));
    run(rest);
  }

 private:
  static constexpr size_t kRowsPerBatch = 32;

  void run(PreparedInsert& insert) {
    sqlite3_stmt* statement = insert.get();
    for (size_t i = 0; i < cells_.size(); ++i) {
      const Cell& cell = cells_[i];
      int index = static_cast<int>(i) + 1;
      int rc = cell.type == Cell::Type::Integer ? sqlite3_bind_int64(statement, index, cell.integer)
               : cell.type == Cell::Type::Text
                   ? sqlite3_bind_text(statement, index, cell.text.data(),
                                       static_cast<int>(cell.text.size()), SQLITE_STATIC)
                   : sqlite3_bind_null(statement, index);
      if (rc != SQLITE_OK) throw SqliteError(std::string("bind: ") + sqlite3_errstr(rc));
    }
    insert.run();
    cells_.clear();
  }

  Database& db_;
  const TableInfo& table_;
  size_t columns_;
  PreparedInsert batch_;
  std::vector<Cell> cells_;
};

void bind_op(RowBinder& row, const Op& op, size_t position) {
  bool migration = op.kind == OpKind::Migration;
  bool collective = op.kind == OpKind::Collective || op.kind == OpKind::Message;
  bool moves_bytes = op.kind == OpKind::Copy || op.kind == OpKind::Memset || migration || collective;
  row.integer(static_cast<int64_t>(position + 1))
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
}

void bind_value(RowBinder& row, const Graph& graph, size_t position) {
  const Value& value = graph.values[position];
  const Location& location = graph.locations[value.location];
  int16_t residency = graph.residency(static_cast<uint32_t>(position));
  row.integer(static_cast<int64_t>(position + 1))
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
      .optional(residency != kNoResidency, residency)
      .optional(location.sub_allocation_id.has_value(), location.sub_allocation_id.value_or(0))
      .integer(value.offset)
      .integer(location.exchanged);
}

void bind_edge(RowBinder& row, const Edge& edge) {
  row.integer(int64_t{edge.src_value} + 1)
      .integer(int64_t{edge.dst_value} + 1)
      .integer(int64_t{edge.op} + 1)
      .constant_text(to_string(edge.kind))
      .optional(edge.bytes >= 0, edge.bytes)
      .integer(edge.uninitialized_read);
}

void bind_op_value(RowBinder& row, uint32_t op, uint32_t value, bool written, bool uninitialized,
                   bool through_set) {
  row.integer(int64_t{op} + 1)
      .integer(int64_t{value} + 1)
      .integer(written)
      .integer(uninitialized)
      .integer(through_set);
}

void store_rows(Database& db, const Graph& graph) {
  BatchInsert ops(db, ops_table());
  for (size_t i = 0; i < graph.ops.size(); ++i)
    ops.add([&](RowBinder& row) { bind_op(row, graph.ops[i], i); });
  ops.finish();
  BatchInsert values(db, values_table());
  for (size_t i = 0; i < graph.values.size(); ++i)
    values.add([&](RowBinder& row) { bind_value(row, graph, i); });
  values.finish();
  BatchInsert op_values(db, op_values_table());
  for (uint32_t op = 0; op < graph.ops.size(); ++op) {
    for (uint32_t r = graph.op_reads_begin[op]; r < graph.op_reads_begin[op + 1]; ++r) {
      op_values.add([&](RowBinder& row) {
        bind_op_value(row, op, graph.op_reads[r], false, graph.op_reads_uninitialized[r],
                      graph.op_reads_in_set[r]);
      });
    }
    bool set = graph.ops[op].access_set;
    for (uint32_t w = graph.op_writes_begin[op]; w < graph.op_writes_begin[op + 1]; ++w) {
      op_values.add(
          [&](RowBinder& row) { bind_op_value(row, op, graph.op_writes[w], true, false, set); });
    }
  }
  op_values.finish();
  BatchInsert edges(db, listed_edges_table());
  for (const Edge& edge : graph.listed_edges) edges.add([&](RowBinder& row) { bind_edge(row, edge); });
  edges.finish();
}

std::vector<const TableInfo*> tables() {
  return {&ops_table(), &values_table(), &op_values_table(), &listed_edges_table()};
}

std::string tables_sql() {
  std::string sql;
  for (const TableInfo* table : tables()) sql += create_table_sql(*table);
  return sql;
}

// Made once the rows are in: building an index at once costs less than
// keeping it up row by row.
std::string indexes_and_view_sql() {
  std::string sql;
  for (const TableInfo* table : tables()) sql += create_indexes_sql(*table);
  return sql + create_view_sql(edges_view());
}

}  // namespace

std::string dvdg_tables_sql() { return tables_sql() + indexes_and_view_sql(); }

void for_each_stored_edge(trace::Trace& trace, const std::function<void(const StoredEdge&)>& f) {
  Database& db = trace.db();
  if (!db.has_table(ops_table().name) || !db.has_table(op_values_table().name) ||
      !db.has_table(listed_edges_table().name) || !db.has_column(op_values_table().name, "through_set"))
    return;
  std::vector<bool> kernel;  // by dvdg_ops.id
  trace.stream<DvdgOpRow>("", [&](const trace::Packed<DvdgOpRow>& op) {
    if (op.id < 0) return;
    if (static_cast<size_t>(op.id) >= kernel.size()) kernel.resize(op.id + 1, false);
    kernel[op.id] = trace.text(op.kind) == trace::to_string(OpKind::Kernel);
  });
  auto kind_of = [](std::string_view text) {
    for (EdgeKind kind : {EdgeKind::Data, EdgeKind::Carry, EdgeKind::Migration}) {
      if (text == to_string(kind)) return kind;
    }
    return EdgeKind::Data;
  };
  trace.stream<DvdgListedEdgeRow>("", [&](const trace::Packed<DvdgListedEdgeRow>& edge) {
    f({edge.src_value_id, edge.dst_value_id, edge.op_id, kind_of(trace.text(edge.kind))});
  });
  // An op's values are stored together: its data edges are made once all are in.
  int64_t op = 0;
  std::vector<int64_t> reads, writes;
  auto flush = [&] {
    for (int64_t w : writes) {
      for (int64_t r : reads) f({r, w, op, EdgeKind::Data});
    }
    reads.clear();
    writes.clear();
  };
  trace.stream<DvdgOpValueRow>("ORDER BY op_id", [&](const trace::Packed<DvdgOpValueRow>& value) {
    if (value.op_id < 0 || static_cast<size_t>(value.op_id) >= kernel.size() || !kernel[value.op_id])
      return;
    if (value.op_id != op) flush();
    op = value.op_id;
    (value.written ? writes : reads).push_back(value.value_id);
  });
  flush();
}

void store_graph(Database& db, const Graph& graph) {
  with_transaction(db, [&] {
    for (const std::string& name : {std::string(kEdgesView), listed_edges_table().name,
                                    op_values_table().name, values_table().name, ops_table().name})
      drop(db, name);
    db.exec(tables_sql());
    store_rows(db, graph);
    db.exec(indexes_and_view_sql());
  });
}

}  // namespace apptracer::dvdg
