// Keeps the trace's files out of the descriptor numbers the program uses.
//
// A program assumes it owns the lowest descriptors: a shell closes a pipe's
// number and dup2()s another onto it, `close(0); open(...)` expects 0 back.
// SQLite's files, opened by the writer thread while a forked shell juggled
// its descriptors, got such numbers: bash closed the trace's WAL as its own
// (the trace then failed with "disk I/O error"), and SQLite, handed fd 0,
// parked /dev/null there for good, so the shell's own dup2 onto 0 failed.
//
// SQLite's Unix VFS opens through a table of system calls that can be
// replaced: its "open" becomes one that moves a descriptor opened on a
// tracer thread (base/inside_tracer.h) above the program's numbers, with
// close-on-exec. Opens on the program's threads (its own SQLite use, in the
// same library) are left as they were.
#pragma once

#include "base/config.h"

namespace apptracer {

// Installs the replacement once; later calls do nothing. False when the
// default VFS does not allow it (then descriptors stay where SQLite puts them).
bool keep_sqlite_descriptors_high();

// The lowest number a tracer descriptor is moved to (from the soft limit on
// open files, read once).
int tracer_descriptor_floor();

// For its scope, on the calling tracer thread: the next file SQLite opens
// (a new connection's database) must be the file the process claimed; any
// other (one put at that name since) is refused, so the tracer never writes
// into a file it did not create.
class ClaimedFileCheck {
 public:
  explicit ClaimedFileCheck(const ClaimedOutput& claimed);
  ~ClaimedFileCheck();
  ClaimedFileCheck(const ClaimedFileCheck&) = delete;
  ClaimedFileCheck& operator=(const ClaimedFileCheck&) = delete;
  // Whether SQLite was handed another file than the one claimed.
  bool refused() const;
};

}  // namespace apptracer
