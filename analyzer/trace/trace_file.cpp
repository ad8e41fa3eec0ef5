#include "analyzer/trace/trace_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>

#include "apptracer/schema.h"
#include "apptracer/text_escape.h"
#include "analyzer/trace/read_only_vfs.h"
#include "analyzer/trace/schema_objects.h"
#include "analyzer/trace/schema_version.h"

namespace apptracer {

namespace {

std::optional<off_t> size_of(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return std::nullopt;
  return info.st_size;
}

TraceError unreadable(const std::string& path, int error) {
  return TraceError(path + ": cannot read it (" + std::strerror(error) + ")");
}

// The first bytes of the file: SQLite's magic, and byte 18 (2 in WAL mode).
std::string file_header(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw unreadable(path, errno);
  char header[20] = {};
  ssize_t got = read(fd, header, sizeof header);
  int error = errno;
  close(fd);
  if (got < 0) throw unreadable(path, error);
  return std::string(header, static_cast<size_t>(got));
}

// `path` as an SQLite file: URI (RFC 3986 escapes where SQLite needs them).
std::string file_uri(const std::string& path) {
  char resolved[PATH_MAX];
  std::string absolute = realpath(path.c_str(), resolved) ? resolved : path;
  std::string uri = "file:";
  for (char c : absolute) {
    if (c == '%' || c == '?' || c == '#') {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", static_cast<unsigned char>(c));
      uri += escaped;
    } else {
      uri += c;
    }
  }
  return uri;
}

// How to read a trace without writing anything beside it, and what to tell
// the user about what is read.
struct ReadOnlyOpening {
  std::string uri;
  std::string vfs;  // empty: SQLite's default
  std::string note;
};

ReadOnlyOpening read_only_opening(const std::string& path, bool wal_header) {
  std::string uri = file_uri(path);
  if (has_hot_journal(path.c_str())) {
    return {uri + "?immutable=1&apptracer_rollback=1", read_only_vfs_name(),
            "a write to " + path + " was interrupted (" + path +
                "-journal is beside it): reading the trace as it was before that write; neither "
                "file is changed"};
  }
  std::optional<off_t> wal = size_of(path + "-wal");
  if (wal) {
    std::string note = *wal == 0 ? ""
                                 : path + " is still being recorded, or its recording was cut short (" +
                                       path + "-wal is beside it): reading what it had committed";
    // A writer still at work shares the log's index (-shm) with readers, so
    // SQLite's own read-only mode is used; else the index is rebuilt in
    // memory, and -shm is neither created nor touched.
    if (wal_in_use(path.c_str())) return {uri + "?mode=ro", "", note};
    return {uri + "?mode=ro", read_only_vfs_name(), note};
  }
  // A WAL database without its log holds everything in the file itself; read
  // it as it is, or SQLite would create the log beside it.
  if (wal_header) return {uri + "?immutable=1", "", ""};
  return {uri + "?mode=ro", "", ""};
}

void check_schema_version(Database& db, const std::string& path) {
  std::string version = trace_meta(db, "schema_version");
  if (version.empty()) throw TraceError(path + ": meta has no schema_version, not an apptracer trace");
  std::optional<int> number = parse_version(version);
  if (!number || *number == 0) {
    throw TraceError(path + ": meta.schema_version is '" + one_line(version, 40) +
                     "', not a version number; not an apptracer trace, or a damaged one");
  }
  if (*number > kSchemaVersion) {
    throw TraceError(path + ": trace schema version " + std::to_string(*number) +
                     " is newer than this apptracer understands (" +
                     std::to_string(kSchemaVersion) + "); upgrade apptracer");
  }
}

bool process_alive(int64_t pid) {
  if (pid <= 0 || pid > INT_MAX) return false;
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  // A reused pid belongs to a process without the tracer mapped.
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  if (!maps) return true;  // cannot tell: assume it is the recording process
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("libapptracer") != std::string::npos) return true;
  }
  return false;
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace

Database open_trace(const std::string& path, TraceAccess access, std::string& note) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    if (errno != ENOENT) throw unreadable(path, errno);
    throw TraceError(path + ": no such file; record one with 'apptracer record -- ./app'");
  }
  if (!S_ISREG(info.st_mode)) throw TraceError(path + ": not a regular file");
  if (info.st_size == 0) throw EmptyTrace(path);
  std::string header = file_header(path);
  if (header.size() < 16 || header.compare(0, 15, "SQLite format 3") != 0) {
    throw TraceError(path + ": not an SQLite database, so not an apptracer trace");
  }
  try {
    Database db;
    if (access == TraceAccess::ReadOnly) {
      ReadOnlyOpening opening = read_only_opening(path, header.size() > 18 && header[18] == 2);
      db = Database::open_read_only_uri(opening.uri, opening.vfs);
      note = opening.note;
    } else {
      db = Database(path, Database::Mode::ReadWrite);
    }
    // Before anything reads a table: what the file put under a declared
    // name runs when it is read.
    check_schema_objects(db, path);
    if (!db.has_table("meta")) {
      Statement tables = db.prepare("SELECT count(*) FROM sqlite_master");
      if (tables.step() && tables.int64(0) == 0) throw EmptyTrace(path);
      throw TraceError(path + ": SQLite database without a meta table, not an apptracer trace");
    }
    check_schema_version(db, path);
    // A truncated file often opens fine and fails on first real read.
    db.exec("SELECT count(*) FROM api_calls");
    return db;
  } catch (const SqliteError& error) {
    std::string what = error.what();
    if (what.find("database is locked") != std::string::npos) {
      throw TraceError(path + ": another process is writing it (database is locked); try again "
                              "when it is done");
    }
    throw TraceError(path + ": damaged or truncated trace (" + one_line(what) + ")");
  }
}

Database open_trace(const std::string& path, TraceAccess access) {
  std::string note;
  Database db = open_trace(path, access, note);
  if (!note.empty()) std::fprintf(stderr, "apptracer: note: %s\n", note.c_str());
  return db;
}

std::string trace_meta(Database& db, const std::string& key, const std::string& fallback) {
  Statement query = db.prepare("SELECT value FROM meta WHERE key = ?");
  query.bind(1, key);
  return query.step() ? query.text(0) : fallback;
}

std::string still_being_recorded(const std::string& path, Database& db) {
  if (trace_meta(db, "status") != kStatusComplete && trace_meta(db, "host") == host_name()) {
    std::optional<int> pid = parse_version(trace_meta(db, "pid"));
    if (pid && process_alive(*pid)) {
      return path + " is still being recorded (process " + std::to_string(*pid) + " is running)";
    }
  }
  if (size_of(path + "-wal").value_or(0) > 0) {
    return path + " is still being recorded, or its recording was cut short (" + path +
           "-wal is beside it)";
  }
  return "";
}

void refuse_store_while_recording(const std::string& path, Database& db, bool force) {
  if (force) return;
  std::string why = still_being_recorded(path, db);
  if (!why.empty()) {
    throw TraceError(why + "; store results when the recording has ended (--force stores anyway)");
  }
}

int reading_trace(const std::string& path, const std::function<int()>& work) {
  try {
    return work();
  } catch (const DamagedTrace& error) {
    throw TraceError(path + ": " + error.what());
  } catch (const SqliteError& error) {
    // A trace older than the oldest this apptracer fully reads lacks tables
    // or columns: what it lacks is no damage.
    std::optional<int> version;
    try {
      std::string note;
      Database db = open_trace(path, TraceAccess::ReadOnly, note);
      version = trace_schema_version(db);
    } catch (const std::exception&) {
    }
    if (version && *version < kOldestReadableSchemaVersion) {
      throw TraceError(path + ": a trace of schema version " + std::to_string(*version) +
                       " lacks what this needs (" + one_line(error.what()) +
                       "); record the program again with this apptracer");
    }
    throw TraceError(path + ": cannot read the trace (" + one_line(error.what()) +
                     "); is it damaged, or from another apptracer version?");
  }
}

std::string one_line(std::string_view text, size_t limit) {
  std::string line;
  for (char c : text) {
    bool space = std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c));
    if (space && (line.empty() || line.back() == ' ')) continue;
    line += space ? ' ' : c;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (line.size() > limit) line = line.substr(0, limit) + "...";
  return terminal_text(line);
}

}  // namespace apptracer
