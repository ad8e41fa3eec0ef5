// `apptracer timeline TRACE [-o FILE] [--format perfetto|chrome-json] [--dvdg]`:
// the trace as a timeline for ui.perfetto.dev (default) or any Chrome-JSON
// tool (Holistic Trace Analysis, TensorBoard: Kineto's layout).
#include <cstdio>
#include <memory>
#include <string>

#include "analyzer/timeline/chrome_json_writer.h"
#include "analyzer/commands.h"
#include "analyzer/output_file.h"
#include "analyzer/timeline/perfetto_writer.h"
#include "analyzer/progress.h"
#include "analyzer/timeline/timeline.h"
#include "analyzer/trace/trace.h"

namespace apptracer {

namespace {

struct TimelineOptions {
  std::string trace;
  std::string output;
  std::string format = "perfetto";
  bool dvdg = false;
  bool force = false;
};

// What the DVDG flows came from, or how to get them.
const char* dvdg_note(TimelineCounts::Dvdg dvdg) {
  switch (dvdg) {
    case TimelineCounts::Dvdg::Stored: return "DVDG stored in the trace";
    case TimelineCounts::Dvdg::Built: return "DVDG built in memory, not stored";
    case TimelineCounts::Dvdg::None: break;
  }
  return "no DVDG stored: --dvdg builds it";
}

int run_timeline(const TimelineOptions& options) {
  bool perfetto = options.format == "perfetto";
  std::string output = options.output.empty()
                           ? replace_extension(options.trace, perfetto ? ".pftrace" : ".json")
                           : options.output;
  OutputFile file(output, {options.trace}, options.force);
  trace::Trace trace(options.trace, TraceAccess::ReadOnly);
  Progress progress("timeline");
  std::unique_ptr<TimelineSink> writer;
  if (perfetto) {
    writer = std::make_unique<PerfettoWriter>(file.stream());
  } else {
    writer = std::make_unique<ChromeJsonWriter>(file.stream());
  }
  TimelineCounts counts = stream_timeline(
      trace, *writer, progress, options.dvdg ? DvdgFlowSource::StoredOrBuilt : DvdgFlowSource::Stored);
  file.commit();
  std::fprintf(stderr,
               "apptracer: wrote %s: %zu tracks, %zu slices, %zu counter values, %llu flows (%llu "
               "call->GPU, %llu DVDG; %s); %s\n",
               output.c_str(), counts.tracks, counts.slices, counts.counter_values,
               static_cast<unsigned long long>(counts.flows),
               static_cast<unsigned long long>(counts.api_flows),
               static_cast<unsigned long long>(counts.dvdg_flows),
               dvdg_note(counts.dvdg), trace.origin().describe().c_str());
  return 0;
}

}  // namespace

void add_timeline_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("timeline", "Export a timeline for Perfetto (or Chrome JSON)");
  auto options = std::make_shared<TimelineOptions>();
  input_files(cmd->add_option("trace", options->trace, "Trace database"))->required();
  cmd->add_option("-o,--output", options->output,
                  "Output file (default: the trace's name with .pftrace or .json; '-': standard "
                  "output)");
  cmd->add_option("-f,--format", options->format, "perfetto (protobuf) or chrome-json")
      ->check(CLI::IsMember({"perfetto", "chrome-json"}));
  cmd->add_flag("--dvdg", options->dvdg,
                "Draw data flows along the DVDG even when `apptracer dvdg` stored no graph in the "
                "trace: the graph is built in memory (the trace is not changed)");
  cmd->add_flag("--force", options->force, "Replace the output file if it exists");
  cmd->callback([&result, options] { result = [options] {
      return reading_trace(options->trace, [&] { return run_timeline(*options); });
    }; });
}

}  // namespace apptracer
