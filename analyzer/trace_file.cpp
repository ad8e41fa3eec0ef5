#include "trace_file.h"

#include <sys/stat.h>

#include <fstream>

#include "apptracer/schema.h"

namespace apptracer {

namespace {

bool has_sqlite_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof header);
  return in.gcount() == sizeof header && std::string(header, 15) == "SQLite format 3";
}

}  // namespace

Database open_trace(const std::string& path, TraceAccess access) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    throw TraceError(path + ": no such file; record one with 'apptracer record -- ./app'");
  }
  if (!S_ISREG(info.st_mode)) throw TraceError(path + ": not a regular file");
  if (info.st_size == 0) throw TraceError(path + ": empty file, not an apptracer trace");
  if (!has_sqlite_header(path)) {
    throw TraceError(path + ": not an SQLite database, so not an apptracer trace");
  }
  try {
    Database db(path, access == TraceAccess::ReadOnly ? Database::Mode::ReadOnly
                                                      : Database::Mode::ReadWrite);
    if (!db.has_table("meta")) {
      throw TraceError(path + ": SQLite database without a meta table, not an apptracer trace");
    }
    std::string version = trace_meta(db, "schema_version");
    if (version.empty()) throw TraceError(path + ": meta has no schema_version, not an apptracer trace");
    int number = 0;
    try {
      number = std::stoi(version);
    } catch (const std::exception&) {
      throw TraceError(path + ": unreadable schema_version '" + version + "'");
    }
    if (number > kSchemaVersion) {
      throw TraceError(path + ": trace schema version " + version +
                       " is newer than this apptracer understands (" +
                       std::to_string(kSchemaVersion) + "); upgrade apptracer");
    }
    // A truncated file often opens fine and fails on first real read.
    db.exec("SELECT count(*) FROM api_calls");
    return db;
  } catch (const SqliteError& error) {
    throw TraceError(path + ": damaged or truncated trace (" + error.what() + ")");
  }
}

std::string trace_meta(Database& db, const std::string& key, const std::string& fallback) {
  Statement query = db.prepare("SELECT value FROM meta WHERE key = ?");
  query.bind(1, key);
  return query.step() ? query.text(0) : fallback;
}

}  // namespace apptracer
