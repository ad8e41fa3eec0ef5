// Read-only SQL on a trace: the engine of `apptracer query`.
#pragma once

#include <stdexcept>
#include <string>

#include "apptracer/sqlite.h"
#include "table.h"

namespace apptracer {

class QueryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs one SQL statement and hands its rows to `sink` one at a time, holding
// none. A statement that could modify the database, more than one statement,
// or invalid SQL throws QueryError before anything runs.
void run_read_only_query(Database& db, const std::string& sql, RowSink& sink);

// The same, every row in one table (small results, tests).
Table run_read_only_query(Database& db, const std::string& sql);

}  // namespace apptracer
