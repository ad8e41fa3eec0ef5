#include "graph_store.h"

#include <sqlite3.h>

#include <string>

namespace apptracer::dvdg {

namespace {

constexpr const char* kTables = R"sql(
CREATE TABLE dvdg_ops (
  id                  INTEGER PRIMARY KEY,  -- position in program order, from 1
  kind                TEXT NOT NULL,        -- allocation, free, copy, memset, kernel, migration,
                                            -- host phase
  source_id           INTEGER NOT NULL,     -- its row: allocations (allocation, free), memcpys,
                                            -- memsets or kernels; host phase: um_events (its
                                            -- first migration); migration: its cause's row
                                            -- (kernels, memcpys, memsets, um_events) or its
                                            -- prefetch (memcpys)
  copy_kind           INTEGER,              -- enum copy_kind, copies only
  name_id             INTEGER REFERENCES strings(id),  -- kernels: demangled (else mangled) name
  device              INTEGER,
  stream              INTEGER,
  issue_ns            INTEGER NOT NULL,     -- host issued it
  start_ns            INTEGER NOT NULL,     -- GPU start when known, else issue
  end_ns              INTEGER NOT NULL,
  bytes               INTEGER,
  reads_uninitialized INTEGER NOT NULL,     -- 1: a certain read of memory never written
  arguments_unknown   INTEGER NOT NULL DEFAULT 0, -- 1: a kernel without kernel_args rows,
                                                  -- so without edges
  cause_op_id         INTEGER REFERENCES dvdg_ops(id),  -- migrations GPU work or a host phase
                                                        -- caused: that op (the next one)
  from_location       INTEGER,              -- migrations: device ordinal, -1 the host
  to_location         INTEGER,
  migration_cause     TEXT                  -- migrations: um_migration_cause name
);
CREATE TABLE dvdg_values (
  id                 INTEGER PRIMARY KEY,
  alloc_id           INTEGER REFERENCES allocations(id),  -- NULL: memory in no known allocation
  address            INTEGER NOT NULL,
  bytes              INTEGER NOT NULL,
  device             INTEGER,
  memory             INTEGER NOT NULL,      -- enum memory_kind
  version            INTEGER NOT NULL,      -- 0 when allocated, +1 per write
  producer_op_id     INTEGER REFERENCES dvdg_ops(id),
  freed_op_id        INTEGER REFERENCES dvdg_ops(id),
  holds_data         INTEGER NOT NULL,      -- 0: device memory nothing has written yet
  read_uninitialized INTEGER NOT NULL,      -- 1: read while holding no data
  location           INTEGER                -- managed memory: where it resides (device
                                            -- ordinal, -1 the host); NULL for other memory
);
CREATE TABLE dvdg_edges (
  src_value_id       INTEGER NOT NULL REFERENCES dvdg_values(id),
  dst_value_id       INTEGER NOT NULL REFERENCES dvdg_values(id),
  op_id              INTEGER NOT NULL REFERENCES dvdg_ops(id),
  kind               TEXT NOT NULL,         -- data: op read src; carry: src survives a
                                            -- partial write; migration: src moved to another
                                            -- location (managed memory), content unchanged
  bytes              INTEGER,               -- NULL when unknown (kernels)
  uninitialized_read INTEGER NOT NULL
);
)sql";

std::string insert_sql(const char* table, int columns, size_t rows) {
  std::string row = "(";
  for (int i = 0; i < columns; ++i) row += i ? ",?" : "?";
  row += ")";
  std::string sql = std::string("INSERT INTO ") + table + " VALUES ";
  for (size_t i = 0; i < rows; ++i) sql += (i ? "," : "") + row;
  return sql;
}

// Binds one row's columns of a multi-row INSERT. This is the hot loop of a
// million-operation graph, so it talks to SQLite directly: constant text is
// bound without a copy and nothing is cleared between batches (every column
// is bound every time, NULL included).
class RowBinder {
 public:
  RowBinder(sqlite3_stmt* statement, int first) : statement_(statement), next_(first + 1) {}

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
// more than a single-row one. bind_row(binder, row) binds every column.
template <typename BindRow>
void insert_rows(Database& db, const char* table, int columns, size_t count, BindRow&& bind_row) {
  constexpr size_t kRowsPerBatch = 32;
  size_t row = 0;
  if (count >= kRowsPerBatch) {
    PreparedInsert batch(db.handle(), insert_sql(table, columns, kRowsPerBatch));
    for (; row + kRowsPerBatch <= count; row += kRowsPerBatch) {
      for (size_t k = 0; k < kRowsPerBatch; ++k) {
        RowBinder binder(batch.get(), static_cast<int>(k) * columns);
        bind_row(binder, row + k);
      }
      batch.run();
    }
  }
  if (row < count) {
    PreparedInsert rest(db.handle(), insert_sql(table, columns, count - row));
    for (size_t k = 0; row + k < count; ++k) {
      RowBinder binder(rest.get(), static_cast<int>(k) * columns);
      bind_row(binder, row + k);
    }
    rest.run();
  }
}

void store_ops(Database& db, const Graph& graph) {
  insert_rows(db, "dvdg_ops", 17, graph.ops.size(), [&](RowBinder& row, size_t i) {
    const Op& op = graph.ops[i];
    bool migration = op.kind == OpKind::Migration;
    bool moves_bytes = op.kind == OpKind::Copy || op.kind == OpKind::Memset || migration;
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
        .optional_text(migration, to_string(static_cast<UmMigrationCause>(op.migration_cause)));
  });
}

void store_values(Database& db, const Graph& graph) {
  insert_rows(db, "dvdg_values", 12, graph.values.size(), [&](RowBinder& row, size_t i) {
    const Value& value = graph.values[i];
    const Location& location = graph.locations[value.location];
    row.integer(static_cast<int64_t>(i + 1))
        .optional(location.alloc_id.has_value(), location.alloc_id.value_or(0))
        .integer(location.address)
        .integer(location.bytes)
        .optional(location.device.has_value(), location.device.value_or(0))
        .integer(static_cast<int64_t>(location.memory))
        .integer(value.version)
        .optional(value.producer_op != Value::kNoOp, int64_t{value.producer_op} + 1)
        .optional(value.freed_by_op != Value::kNoOp, int64_t{value.freed_by_op} + 1)
        .integer(value.holds_data)
        .integer(value.read_uninitialized)
        .optional(value.residency != kNoResidency, value.residency);
  });
}

void store_edges(Database& db, const Graph& graph) {
  insert_rows(db, "dvdg_edges", 6, graph.edges.size(), [&](RowBinder& row, size_t i) {
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

const char* dvdg_tables_sql() { return kTables; }

void store_graph(Database& db, const Graph& graph) {
  with_transaction(db, [&] {
    db.exec(
        "DROP TABLE IF EXISTS dvdg_edges; DROP TABLE IF EXISTS dvdg_values; "
        "DROP TABLE IF EXISTS dvdg_ops;");
    db.exec(kTables);
    store_ops(db, graph);
    store_values(db, graph);
    store_edges(db, graph);
  });
}

}  // namespace apptracer::dvdg
