// Temporary files the analyzer writes (output_file.h) are removed when the
// user stops the command: SIGINT (Ctrl-C), SIGQUIT, SIGTERM (kill) or SIGHUP
// (the terminal went away). The handler only unlinks the registered paths,
// held in fixed memory, then ends the process by the same signal with its
// default action, as if it had no handler. A signal that is ignored (nohup)
// or handled by someone else stays so.
#pragma once

#include <string>

namespace apptracer {

// Creates a new empty file from `pattern` (ending in XXXXXX, as mkstemp
// takes it), removed if one of those signals ends the process; returns its
// name, or "" with errno set when it cannot be created.
std::string create_removed_on_signal(const std::string& pattern);

// The file at `path` (made by create_removed_on_signal) is no longer
// removed on a signal: it was removed, or renamed into place.
void keep_on_signal(const std::string& path);

}  // namespace apptracer
