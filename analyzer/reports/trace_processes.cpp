#include "trace_processes.h"

#include <stdexcept>

#include "analyzer/trace/trace_file.h"

namespace apptracer {

namespace {

int64_t parse_pid(const std::string& text) {
  try {
    return text.empty() ? 0 : std::stoll(text);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

const TraceProcess& TraceProcesses::get(int64_t process_id) const {
  for (const TraceProcess& process : list) {
    if (process.process_id == process_id) return process;
  }
  throw std::out_of_range("trace has no process " + std::to_string(process_id));
}

std::string process_display_name(const std::string& command_line, int64_t pid) {
  std::string program = command_line.substr(0, command_line.find(' '));
  program = program.substr(program.rfind('/') + 1);
  return program.empty() ? "process " + std::to_string(pid) : program;
}

TraceProcesses read_trace_processes(Database& db) {
  TraceProcesses processes;
  processes.merged = db.has_table("processes");
  if (!processes.merged) {
    TraceProcess process;
    process.pid = parse_pid(trace_meta(db, "pid"));
    process.command_line = trace_meta(db, "command_line");
    process.status = trace_meta(db, "status");
    process.name = process_display_name(process.command_line, process.pid);
    processes.list.push_back(process);
    return processes;
  }
  Statement rows =
      db.prepare("SELECT process_id, pid, command_line, status FROM processes ORDER BY process_id");
  while (rows.step()) {
    TraceProcess process;
    process.process_id = rows.int64(0);
    process.pid = rows.optional_int64(1).value_or(0);
    process.command_line = rows.text(2);
    process.status = rows.text(3);
    process.name = process_display_name(process.command_line, process.pid);
    processes.list.push_back(process);
  }
  return processes;
}

}  // namespace apptracer
