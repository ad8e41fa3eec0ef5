// `apptracer info TRACE [--format table|csv|json] [-o FILE]`: what a trace is (process, devices, status) and how
// many rows each table holds. The first thing to run on a trace from elsewhere.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "analyzer/commands.h"
#include "analyzer/table/table_format.h"
#include "apptracer/text_escape.h"
#include "analyzer/trace/trace.h"

namespace apptracer {

namespace {

constexpr const char* kCountedTables[] = {
    "api_calls", "allocations", "memcpys",     "memsets",   "kernels",    "kernel_args",
    "syncs",     "stream_events", "um_events", "mem_advice", "nvtx_ranges", "threads"};

struct InfoTables {
  Table meta{"meta", {"key", "value"}, {}};
  Table devices{"devices", {"id", "name", "compute_capability", "memory_mib", "sm_count"}, {}};
  Table rows{"rows", {"table", "rows"}, {}};
};

InfoTables read_info(trace::Trace& trace, const std::string& path) {
  InfoTables info;
  info.meta.rows.push_back({std::string("trace"), path});
  std::vector<const trace::Packed<MetaRow>*> meta;
  for (const trace::Packed<MetaRow>& row : trace.rows<MetaRow>()) meta.push_back(&row);
  std::sort(meta.begin(), meta.end(),
            [&](const auto* a, const auto* b) { return trace.text(a->key) < trace.text(b->key); });
  for (const trace::Packed<MetaRow>* row : meta) {
    info.meta.rows.push_back({std::string(trace.text(row->key)), std::string(trace.text(row->value))});
  }
  for (const trace::Packed<DeviceRow>& device : trace.rows<DeviceRow>()) {
    info.devices.rows.push_back(
        {Cell(static_cast<int64_t>(device.id)), std::string(trace.text(device.name)),
         "sm_" + std::to_string(device.cc_major.value_or(0)) + std::to_string(device.cc_minor.value_or(0)),
         Cell(static_cast<int64_t>(device.total_memory_bytes.value_or(0) >> 20)),
         Cell(static_cast<int64_t>(device.sm_count.value_or(0)))});
  }
  auto count = [&](const char* table) {
    info.rows.rows.push_back({std::string(table), Cell(static_cast<int64_t>(trace.row_count(table)))});
  };
  for (const char* table : kCountedTables) count(table);
  // Traces recorded before framework allocators' blocks were have none.
  if (trace.db().has_table("sub_allocations")) count("sub_allocations");
  return info;
}

const std::string& text(const Cell& cell) { return std::get<std::string>(cell); }
long long number(const Cell& cell) { return static_cast<long long>(std::get<int64_t>(cell)); }

// The text for people: one line per fact.
void write_info_text(std::ostream& out, const InfoTables& info) {
  char line[512];
  for (const auto& row : info.meta.rows) {
    std::snprintf(line, sizeof line, text(row[0]) == "trace" ? "%-11s %s\n" : "%-30s %s\n",
                  terminal_text(text(row[0])).c_str(), terminal_text(text(row[1])).c_str());
    out << line;
  }
  for (const auto& row : info.devices.rows) {
    std::snprintf(line, sizeof line, "device %lld    %s (%s, %lld MiB, %lld SMs)\n",
                  number(row[0]), terminal_text(text(row[1])).c_str(), text(row[2]).c_str(),
                  number(row[3]), number(row[4]));
    out << line;
  }
  for (const auto& row : info.rows.rows) {
    std::snprintf(line, sizeof line, "rows %-25s %lld\n", text(row[0]).c_str(), number(row[1]));
    out << line;
  }
}

int print_info(const std::string& path, const OutputOptions& output) {
  trace::Trace trace(path, TraceAccess::ReadOnly);
  PrintedOutput printed(output, {path});
  InfoTables info = read_info(trace, path);
  OutputFormat format = parse_output_format(output.format);
  if (format == OutputFormat::Table) {
    write_info_text(printed.stream(), info);
  } else {
    write_tables(printed.stream(), {info.meta, info.devices, info.rows}, format);
  }
  printed.commit();
  if (trace.meta("status") != "complete") {
    std::fprintf(stderr, "apptracer: note: %s is incomplete (the program did not exit normally)\n",
                 path.c_str());
  }
  return 0;
}

}  // namespace

void add_info_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("info", "Show a trace's metadata, devices and row counts");
  auto path = std::make_shared<std::string>();
  input_files(cmd->add_option("trace", *path, "Trace database"))->required();
  auto output = printed_results(cmd);
  cmd->callback([&result, path, output] {
    result = [path, output] { return reading_trace(*path, [&] { return print_info(*path, *output); }); };
  });
}

}  // namespace apptracer
