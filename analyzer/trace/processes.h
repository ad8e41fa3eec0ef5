// The processes a trace holds: one for a trace the tracer wrote, several for
// one `apptracer merge` made (its `processes` table, and a `process_id`
// column in every per-process table). Rows of a single process's trace are
// process 1, as the first process of a merged trace is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/trace/packed_rows.h"

namespace apptracer::trace {

class Trace;

struct TraceProcess {
  ProcessId process_id = kSingleProcess;
  int64_t pid = 0;  // the OS process id, 0 when the trace does not say
  std::string command_line;
  std::string name;    // for display: the program's file name
  std::string status;  // "complete" or "incomplete"
  // When its tracer started (meta start_ns), on the trace's clock (a merged
  // trace's: shifted as the process's times were); none when not recorded.
  std::optional<int64_t> start_ns;
};

struct TraceProcesses {
  bool merged = false;
  std::vector<TraceProcess> list;

  // The process with this id; null for one the trace does not list.
  const TraceProcess* find(int64_t process_id) const;
};

TraceProcesses read_processes(Trace& trace);

// The name a process is shown under: its program's file name, else "process PID".
std::string process_display_name(const std::string& command_line, int64_t pid);

}  // namespace apptracer::trace
