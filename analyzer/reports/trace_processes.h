// The processes a trace holds: one for a trace the tracer wrote, several for
// one `apptracer merge` made (its `processes` table, and a `process_id`
// column in every per-process table; see merge.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apptracer/sqlite.h"

namespace apptracer {

struct TraceProcess {
  int64_t process_id = 1;  // the merged trace's key; 1 for an unmerged trace
  int64_t pid = 0;         // the OS process id, 0 when the trace does not say
  std::string command_line;
  std::string name;        // for display: the program's file name
  std::string status;      // "complete" or "incomplete"
};

struct TraceProcesses {
  bool merged = false;
  std::vector<TraceProcess> list;

  // SQL for a row's process in per-process tables.
  std::string process_column() const { return merged ? "process_id" : "1"; }
  // The process with this id; throws std::out_of_range for an unknown one.
  const TraceProcess& get(int64_t process_id) const;
};

TraceProcesses read_trace_processes(Database& db);

// The name a process is shown under: its program's file name, else "process PID".
std::string process_display_name(const std::string& command_line, int64_t pid);

}  // namespace apptracer
