// `apptracer timeline TRACE [-o FILE] [--format perfetto|chrome-json]`: the
// trace as a timeline for ui.perfetto.dev (default) or any Chrome-JSON tool.
#include <cstdio>
#include <memory>
#include <string>

#include "chrome_json_writer.h"
#include "commands.h"
#include "output_file.h"
#include "perfetto_writer.h"
#include "progress.h"
#include "timeline.h"
#include "trace_file.h"

namespace apptracer {

namespace {

struct TimelineOptions {
  std::string trace;
  std::string output;
  std::string format = "perfetto";
};

int run_timeline(const TimelineOptions& options) {
  bool perfetto = options.format == "perfetto";
  std::string output = options.output.empty()
                           ? replace_extension(options.trace, perfetto ? ".pftrace" : ".json")
                           : options.output;
  Database db = open_trace(options.trace, TraceAccess::ReadOnly);
  Progress progress("timeline");
  Timeline timeline = build_timeline(db, progress);
  OutputFile file(output, options.trace);
  if (perfetto) {
    write_perfetto_trace(file.stream(), timeline, &progress);
  } else {
    write_chrome_json(file.stream(), timeline, &progress);
  }
  file.commit();
  progress.finish();
  std::fprintf(stderr,
               "apptracer: wrote %s: %zu tracks, %zu slices, %llu flows (%llu call->GPU, %llu DVDG)\n",
               output.c_str(), timeline.tracks.size(), timeline.slices.size(),
               static_cast<unsigned long long>(timeline.flow_count),
               static_cast<unsigned long long>(timeline.api_flow_count),
               static_cast<unsigned long long>(timeline.dvdg_flow_count));
  return 0;
}

}  // namespace

void add_timeline_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("timeline", "Export a timeline for Perfetto (or Chrome JSON)");
  auto options = std::make_shared<TimelineOptions>();
  cmd->add_option("trace", options->trace, "Trace database")->required();
  cmd->add_option("-o,--output", options->output,
                  "Output file (default: the trace's name with .pftrace or .json)");
  cmd->add_option("-f,--format", options->format, "perfetto (protobuf) or chrome-json")
      ->check(CLI::IsMember({"perfetto", "chrome-json"}));
  cmd->callback([&result, options] { result = [options] { return run_timeline(*options); }; });
}

}  // namespace apptracer
