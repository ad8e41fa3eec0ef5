// `apptracer info TRACE`: what a trace is (process, devices, status) and how
// many rows each table holds. The first thing to run on a trace from elsewhere.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "analyzer/trace/text_escape.h"
#include "analyzer/trace/trace_file.h"

namespace apptracer {

namespace {

constexpr const char* kCountedTables[] = {
    "api_calls", "allocations", "memcpys",     "memsets",   "kernels",    "kernel_args",
    "syncs",     "stream_events", "um_events", "mem_advice", "nvtx_ranges", "threads"};

int print_info(const std::string& path) {
  Database db = open_trace(path, TraceAccess::ReadOnly);
  std::printf("trace       %s\n", path.c_str());
  Statement meta = db.prepare("SELECT key, value FROM meta ORDER BY key");
  while (meta.step()) {
    std::printf("%-30s %s\n", terminal_text(meta.text(0)).c_str(), terminal_text(meta.text(1)).c_str());
  }
  Statement devices = db.prepare(
      "SELECT id, name, cc_major, cc_minor, total_memory_bytes, sm_count FROM devices ORDER BY id");
  while (devices.step()) {
    std::printf("device %lld    %s (sm_%lld%lld, %lld MiB, %lld SMs)\n",
                static_cast<long long>(devices.int64(0)), terminal_text(devices.text(1)).c_str(),
                static_cast<long long>(devices.int64(2)), static_cast<long long>(devices.int64(3)),
                static_cast<long long>(devices.int64(4) >> 20),
                static_cast<long long>(devices.int64(5)));
  }
  auto print_count = [&](const char* table) {
    Statement count = db.prepare(std::string("SELECT count(*) FROM ") + table);
    count.step();
    std::printf("rows %-25s %lld\n", table, static_cast<long long>(count.int64(0)));
  };
  for (const char* table : kCountedTables) print_count(table);
  // Traces recorded before framework allocators' blocks were have none.
  if (db.has_table("sub_allocations")) print_count("sub_allocations");
  if (trace_meta(db, "status") != "complete") {
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
