// Opening a trace for the analyzer: every way a file can be wrong (missing,
// not SQLite, truncated, not an apptracer trace, newer schema) becomes one
// TraceError with a one-line message saying what to do.
#pragma once

#include <stdexcept>
#include <string>

#include "apptracer/sqlite.h"

namespace apptracer {

class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class TraceAccess {
  ReadOnly,   // stats, query, export: the file is never modified
  ReadWrite,  // dvdg: adds its own tables, touches nothing else
};

// Opens and validates a trace database. Throws TraceError.
Database open_trace(const std::string& path, TraceAccess access);

// meta's value for `key`, or `fallback` when absent.
std::string trace_meta(Database& db, const std::string& key, const std::string& fallback = "");

}  // namespace apptracer
