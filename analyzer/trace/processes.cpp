#include "analyzer/trace/processes.h"

#include <stdexcept>

#include "analyzer/trace/trace.h"

namespace apptracer::trace {

namespace {

std::optional<int64_t> parse_integer(std::string_view text) {
  try {
    size_t used = 0;
    int64_t value = std::stoll(std::string(text), &used);
    return used == text.size() ? std::optional<int64_t>(value) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

TraceProcess single_process(Trace& trace) {
  TraceProcess process;
  process.pid = parse_integer(trace.meta("pid")).value_or(0);
  process.command_line = trace.meta("command_line");
  process.status = trace.meta("status");
  process.name = process_display_name(process.command_line, process.pid);
  process.start_ns = parse_integer(trace.meta("start_ns"));
  return process;
}

}  // namespace

const TraceProcess* TraceProcesses::find(int64_t process_id) const {
  for (const TraceProcess& process : list) {
    if (process.process_id == process_id) return &process;
  }
  return nullptr;
}

std::string process_display_name(const std::string& command_line, int64_t pid) {
  std::string program = command_line.substr(0, command_line.find(' '));
  program = program.substr(program.rfind('/') + 1);
  return program.empty() ? "process " + std::to_string(pid) : program;
}

TraceProcesses read_processes(Trace& trace) {
  TraceProcesses processes;
  processes.merged = trace.db().has_table("processes");
  if (!processes.merged) {
    processes.list.push_back(single_process(trace));
    return processes;
  }
  for (const Packed<ProcessRow>& row : trace.rows<ProcessRow>()) {
    TraceProcess process;
    process.process_id = static_cast<ProcessId>(row.process_id);
    process.pid = row.pid.value_or(0);
    process.command_line = std::string(trace.text(row.command_line));
    process.status = std::string(trace.text(row.status));
    process.name = process_display_name(process.command_line, process.pid);
    processes.list.push_back(process);
  }
  // Each process's start, moved by what merge added to its times.
  auto process = [&](int64_t id) -> TraceProcess* {
    for (TraceProcess& p : processes.list) {
      if (p.process_id == id) return &p;
    }
    return nullptr;
  };
  for (const Packed<ProcessMetaRow>& row : trace.rows<ProcessMetaRow>()) {
    TraceProcess* owner = process(row.process_id);
    if (owner && trace.text(row.key) == "start_ns") owner->start_ns = parse_integer(trace.text(row.value));
  }
  for (const Packed<MergeOffsetRow>& row : trace.rows<MergeOffsetRow>()) {
    TraceProcess* owner = process(row.process_id);
    if (owner && owner->start_ns && trace.text(row.id_space) == "time_ns") *owner->start_ns += row.offset;
  }
  return processes;
}

}  // namespace apptracer::trace
