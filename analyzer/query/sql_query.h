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
// invalid SQL, or a function that shows memory addresses (fts3_tokenizer)
// throws QueryError before anything runs. Temporary results (sorts, DISTINCT,
// recursive queries) are kept in memory, never in a hidden temporary file,
// so limit_query_memory bounds them.
void run_read_only_query(Database& db, const std::string& sql, RowSink& sink);

// Bounds the memory SQLite may use in this process to `mib` MiB: a query
// that needs more stops with a QueryError that says so.
void limit_query_memory(int64_t mib);

// The same, every row in one table (small results, tests).
Table run_read_only_query(Database& db, const std::string& sql);

}  // namespace apptracer
