// `apptracer info TRACE`: what a trace is (process, devices, status) and how
// many rows each table holds. The first thing to run on a trace from elsewhere.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/commands.h"
#include "apptracer/text_escape.h"
#include "analyzer/trace/trace.h"

namespace apptracer {

namespace {

constexpr const char* kCountedTables[] = {
    "api_calls", "allocations", "memcpys",     "memsets",   "kernels",    "kernel_args",
    "syncs",     "stream_events", "um_events", "mem_advice", "nvtx_ranges", "threads"};

int print_info(const std::string& path) {
  trace::Trace trace(path, TraceAccess::ReadOnly);
  std::printf("trace       %s\n", path.c_str());
  std::vector<const trace::Packed<MetaRow>*> meta;
  for (const trace::Packed<MetaRow>& row : trace.rows<MetaRow>()) meta.push_back(&row);
  std::sort(meta.begin(), meta.end(),
            [&](const auto* a, const auto* b) { return trace.text(a->key) < trace.text(b->key); });
  for (const trace::Packed<MetaRow>* row : meta) {
    std::printf("%-30s %s\n", terminal_text(trace.text(row->key)).c_str(),
                terminal_text(trace.text(row->value)).c_str());
  }
  for (const trace::Packed<DeviceRow>& device : trace.rows<DeviceRow>()) {
    std::printf("device %lld    %s (sm_%lld%lld, %lld MiB, %lld SMs)\n",
                static_cast<long long>(device.id), terminal_text(trace.text(device.name)).c_str(),
                static_cast<long long>(device.cc_major.value_or(0)),
                static_cast<long long>(device.cc_minor.value_or(0)),
                static_cast<long long>(device.total_memory_bytes.value_or(0) >> 20),
                static_cast<long long>(device.sm_count.value_or(0)));
  }
  auto print_count = [&](const char* table) {
    std::printf("rows %-25s %lld\n", table, static_cast<long long>(trace.row_count(table)));
  };
  for (const char* table : kCountedTables) print_count(table);
  // Traces recorded before framework allocators' blocks were have none.
  if (trace.db().has_table("sub_allocations")) print_count("sub_allocations");
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
  cmd->callback([&result, path] {
    result = [path] { return reading_trace(*path, [&] { return print_info(*path); }); };
  });
}

}  // namespace apptracer
