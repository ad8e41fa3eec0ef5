// Read-only SQL on a trace: the engine of `apptracer query`.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "apptracer/sqlite.h"
#include "analyzer/table/table.h"

namespace apptracer {

class QueryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs one SQL statement and hands its rows to `sink` one at a time, holding
// none. A statement that could modify the database, more than one statement,
// invalid SQL, a function that shows memory addresses (fts3_tokenizer) or
// ATTACH (SQLite would create files beside the attached database) throws
// QueryError before anything runs. Temporary results (sorts, DISTINCT,
// recursive queries) are kept in memory, never in a hidden temporary file,
// so limit_query_memory bounds them. A statement still running after
// `timeout_s` seconds (a recursive query without end) is stopped with a
// QueryError that says so; 0: no bound.
void run_read_only_query(Database& db, const std::string& sql, RowSink& sink, int64_t timeout_s = 0);

// The bounds `apptracer query` accepts for --memory-limit (MiB) and
// --timeout (seconds), and their defaults.
constexpr int64_t kMostQueryMemoryMib = int64_t{1} << 24;  // 16 TiB
constexpr int64_t kDefaultQueryMemoryMib = 1024;
constexpr int64_t kMostQueryTimeoutS = 7 * 24 * 3600;
constexpr int64_t kDefaultQueryTimeoutS = 600;

// Bounds the memory SQLite may use in this process to `mib` MiB (1 to
// kMostQueryMemoryMib): a query that needs more stops with a QueryError that
// says so.
void limit_query_memory(int64_t mib);

// The same, every row in one table (small results, tests).
Table run_read_only_query(Database& db, const std::string& sql);

}  // namespace apptracer
