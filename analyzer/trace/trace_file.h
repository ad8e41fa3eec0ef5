// Opening a trace for the analyzer: every way a file can be wrong (missing,
// not SQLite, truncated, not an apptracer trace, a schema too new or too old)
// becomes one TraceError with a one-line message naming the file and saying
// what to do.
//
// Read-only opening never changes the trace and leaves no file beside it,
// whatever state it is in: a trace still being written or cut short (its
// write-ahead log beside it, even in a read-only directory or without its
// -shm file) is read as far as it was committed; a trace whose last write
// was interrupted (a hot rollback journal beside it, e.g. `apptracer dvdg`
// killed while storing) is read as it was before that write.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "apptracer/sqlite.h"

namespace apptracer {

class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What an analysis throws when a trace's rows contradict each other (their
// dependencies run in a circle, ...); reading_trace names the file.
class DamagedTrace : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A trace file its process created and never began: 0 bytes, or an SQLite
// file without a table (a pool worker stopped by SIGTERM at its start).
class EmptyTrace : public TraceError {
 public:
  explicit EmptyTrace(const std::string& path)
      : TraceError(path + ": " + kWhy), path_(path) {}
  static constexpr const char* kWhy = "empty: the process ended before its trace began";
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

enum class TraceAccess {
  ReadOnly,   // stats, query, export: the file is never modified
  ReadWrite,  // dvdg: adds its own tables, touches nothing else
};

// Opens and validates a trace database. Throws TraceError. When reading
// needed more than a plain read (see above), `note` says what is read;
// the overload without it prints the note on stderr.
Database open_trace(const std::string& path, TraceAccess access, std::string& note);
Database open_trace(const std::string& path, TraceAccess access);

// meta's value for `key`, or `fallback` when absent.
std::string trace_meta(Database& db, const std::string& key, const std::string& fallback = "");

// Why the trace at `path` is still being recorded ("" when it is not): its
// meta says incomplete and the process that records it is alive here, or a
// write-ahead log is beside it.
std::string still_being_recorded(const std::string& path, Database& db);

// For a command asked to store its results into the trace: throws a
// TraceError when it is still being recorded (its writer would overwrite or
// race them), unless `force`.
void refuse_store_while_recording(const std::string& path, Database& db, bool force);

// Runs a command's work on the trace at `path`: an SQLite error on the way
// (a table or column missing, a damaged page) or a DamagedTrace becomes a
// TraceError naming it.
int reading_trace(const std::string& path, const std::function<int()>& work);

// `text` on one line: line breaks, tabs and other control characters become
// spaces, anything past `limit` characters is cut (SQLite quotes whole schema
// statements), and what is left is terminal_text.
std::string one_line(std::string_view text, size_t limit = 300);

}  // namespace apptracer
