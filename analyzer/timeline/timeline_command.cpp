// `apptracer timeline TRACE [-o FILE] [--format perfetto|chrome-json] [--dvdg] [--memory-owners]
// [--steps A-B | --steady]`: the trace (or some of its steps) as a timeline
// for ui.perfetto.dev (default) or any Chrome-JSON tool (Holistic Trace
// Analysis, TensorBoard: Kineto's layout);
// `apptracer timeline TRACE --hta DIR`: the folder HTA reads, a file per rank.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "analyzer/timeline/chrome_json_writer.h"
#include "analyzer/commands.h"
#include "analyzer/output_file.h"
#include "analyzer/timeline/hta_folder.h"
#include "analyzer/timeline/perfetto_writer.h"
#include "analyzer/timeline/threaded_sink.h"
#include "analyzer/progress.h"
#include "analyzer/timeline/timeline.h"
#include "analyzer/trace/trace.h"

namespace apptracer {

namespace {

struct TimelineOptions {
  std::string trace;
  std::shared_ptr<OutputOptions> output;
  std::string hta;
  bool dvdg = false;
  bool memory_owners = false;
  std::shared_ptr<trace::StepSelection> steps;
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

void print_counts(const std::string& wrote, const TimelineCounts& counts, trace::Trace& trace) {
  std::string window = trace.window() ? "; " + trace.window()->describe() : "";
  std::fprintf(stderr,
               "apptracer: wrote %s: %zu tracks, %zu slices, %zu counter values, %llu flows (%llu "
               "call->GPU, %llu DVDG; %s); %s%s\n",
               wrote.c_str(), counts.tracks, counts.slices, counts.counter_values,
               static_cast<unsigned long long>(counts.flows),
               static_cast<unsigned long long>(counts.api_flows),
               static_cast<unsigned long long>(counts.dvdg_flows), dvdg_note(counts.dvdg),
               trace.origin().describe().c_str(), window.c_str());
}

// The trace, limited to the steps asked for.
void open_steps(trace::Trace& trace, const TimelineOptions& options, Progress& progress) {
  if (!options.steps->any()) return;
  progress.phase("finding steps");
  trace.limit_to_steps(*options.steps);
}

TimelineContent content(const TimelineOptions& options) {
  return {options.dvdg ? DvdgFlowSource::StoredOrBuilt : DvdgFlowSource::Stored, options.memory_owners};
}

int run_hta_folder(const TimelineOptions& options) {
  if (options.output->format_given == "perfetto")
    throw UsageError("timeline: --hta writes Chrome JSON, what HTA reads; drop --format perfetto");
  trace::Trace trace(options.trace, TraceAccess::ReadOnly);
  Progress progress("timeline");
  open_steps(trace, options, progress);
  HtaFolder folder = write_hta_folder(trace, options.trace, options.hta, options.output->force, progress,
                                      content(options));
  std::string wrote = options.hta + " for HTA (" + std::to_string(folder.files.size()) +
                      (folder.files.size() == 1 ? " rank" : " ranks") +
                      (folder.ranks_by_order ? ", numbered in the trace's process order" : "") + ")";
  print_counts(wrote, folder.counts, trace);
  return 0;
}

int run_timeline(const TimelineOptions& options) {
  if (!options.hta.empty()) return run_hta_folder(options);
  bool perfetto = options.output->format == "perfetto";
  std::string output = options.output->path.empty()
                           ? replace_extension(options.trace, perfetto ? ".pftrace" : ".json")
                           : options.output->path;
  OutputFile file(output, {options.trace}, options.output->force);
  trace::Trace trace(options.trace, TraceAccess::ReadOnly);
  Progress progress("timeline");
  open_steps(trace, options, progress);
  std::unique_ptr<TimelineSink> writer;
  if (perfetto) {
    writer = std::make_unique<PerfettoWriter>(file.stream());
  } else {
    writer = std::make_unique<ChromeJsonWriter>(file.stream());
  }
  ThreadedSink threaded(*writer);
  TimelineCounts counts = stream_timeline(trace, threaded, progress, content(options));
  file.commit();
  print_counts(output, counts, trace);
  return 0;
}

}  // namespace

void add_timeline_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("timeline", "Export a timeline for Perfetto (or Chrome JSON)");
  auto options = std::make_shared<TimelineOptions>();
  input_files(cmd->add_option("trace", options->trace, "Trace database"))->required();
  options->output = written_files(
      cmd, "Output file (default: the trace's name with .pftrace or .json; '-': standard output)",
      {{"perfetto", {".pftrace", ".perfetto-trace"}}, {"chrome-json", {".json"}}});
  cmd->add_option("--hta", options->hta,
                  "Write the folder Holistic Trace Analysis reads (TraceAnalysis(trace_dir=DIR)): "
                  "Chrome JSON, one file per rank (per process of a merged trace)")
      ->excludes(options->output->output_option);
  cmd->add_flag("--dvdg", options->dvdg,
                "Draw data flows along the DVDG even when `apptracer dvdg` stored no graph in the "
                "trace: the graph is built in memory (the trace is not changed)");
  cmd->add_flag("--memory-owners", options->memory_owners,
                "Also a counter track per owner of each device's memory (the program, each framework's "
                "tensors and cache, NCCL, library workspaces; docs/memory.md), as the report stacks "
                "them: builds the data-flow graph and the memory model first (more time and memory)");
  options->steps = step_options(cmd);
  cmd->callback([&result, options] { result = [options] {
      return reading_trace(options->trace, [&] { return run_timeline(*options); });
    }; });
}

}  // namespace apptracer
