// An SQLite VFS for reading a trace without changing or leaving any file:
// the analyzer's read-only commands open traces through it where SQLite's own
// read-only mode would need to write (trace_file.cpp decides when).
//   - It never creates, writes or deletes a file of the trace (SQLite's own
//     temporary files, for temporary tables and sorts, are as usual).
//   - The write-ahead log's index (normally the -shm file) lives in this
//     process's memory, so a WAL trace in a read-only directory, or one whose
//     -shm file is gone, can be read, and no -shm file is left behind.
//   - With the URI parameter `apptracer_rollback=1`, a trace whose last write
//     was interrupted (a hot rollback journal beside it) is read as it was
//     before that write: pages the journal saved are read from the journal, as
//     SQLite's rollback would restore them, and neither file is touched.
#pragma once

namespace apptracer {

// Registers the VFS (once) and returns its name, for sqlite3_open_v2.
const char* read_only_vfs_name();

// Whether `path` has a rollback journal SQLite would roll back before
// reading: present, started (first byte not zero), and no live writer holds
// the database's RESERVED lock.
bool has_hot_journal(const char* path);

// Whether a process has the WAL database at `path` open (it holds a lock
// on its -shm file): then SQLite's own read-only mode must share the log's
// index with it.
bool wal_in_use(const char* path);

}  // namespace apptracer
