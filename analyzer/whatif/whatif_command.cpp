// `apptracer whatif TRACE --system system.json [changes] [--format table|csv|json] [-o FILE] [--store]`:
// the trace replayed on a measured machine, unchanged and with changes
// (whatif.h), beside the recording.
#include <fstream>
#include <iostream>
#include <memory>

#include "analyzer/commands.h"
#include "analyzer/output_file.h"
#include "analyzer/table/table_format.h"
#include "analyzer/trace/trace.h"
#include "analyzer/whatif/whatif.h"
#include "analyzer/whatif/whatif_report.h"
#include "analyzer/whatif/whatif_store.h"

namespace apptracer {

namespace {

struct WhatifCommandOptions {
  std::string trace;
  whatif::WhatifOptions whatif;
  std::optional<int> numa;
  std::shared_ptr<OutputOptions> output;
  bool store = false;
  size_t steps = 10;
};

int run_whatif_command(WhatifCommandOptions& options) {
  options.whatif.numa_node = options.numa;
  whatif::WhatifResult result;
  PrintedOutput printed(*options.output, {options.trace, options.whatif.system_path,
                                          options.whatif.system2_path});
  {
    trace::Trace trace(options.trace, options.store ? TraceAccess::ReadWrite : TraceAccess::ReadOnly);
    if (options.store) refuse_store_while_recording(options.trace, trace.db(), options.output->force);
    result = whatif::run_whatif(trace, options.whatif);
    if (options.store) {
      try {
        whatif::store_whatif(trace.db(), result);
      } catch (const SqliteError& error) {
        throw TraceError(options.trace + ": cannot store the what-if (" + error.what() +
                         "); leave out --store to only print it");
      }
    }
  }
  std::ostream& out = printed.stream();
  OutputFormat format = parse_output_format(options.output->format);
  if (format == OutputFormat::Json) {
    out << whatif::whatif_json(result);
  } else if (format == OutputFormat::Csv) {
    write_tables(out, whatif::whatif_tables(result, options.steps), OutputFormat::Csv);
  } else {
    whatif::write_whatif_text(out, result, options.steps);
  }
  // Said beside the text; on standard error beside CSV and JSON.
  std::ostream& said = format == OutputFormat::Table ? out : std::cerr;
  if (options.store) said << "stored in " << options.trace << " (whatif_runs, whatif_phases, "
                          << "whatif_transfers, whatif_critical_path)\n";
  printed.commit();
  return 0;
}

}  // namespace

void add_whatif_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand(
      "whatif", "Predict a trace's run time on a measured machine, with pinned buffers, overlap, ...");
  auto options = std::make_shared<WhatifCommandOptions>();
  input_files(cmd->add_option("trace", options->trace, "Trace database"))->required();
  input_files(cmd->add_option("--system", options->whatif.system_path,
                              "System file of the machine to replay on (apptracer links -o FILE)"))
      ->required()
      ->type_name("FILE");
  input_files(cmd->add_option("--system2", options->whatif.system2_path,
                              "What-if: another machine's system file"))
      ->type_name("FILE");
  cmd->add_flag("--pin", options->whatif.pin, "What-if: pageable host buffers are pinned");
  cmd->add_option("--numa", options->numa, "What-if: host buffers on NUMA node N")->type_name("N");
  values_hold_commas(cmd->add_option("--link", options->whatif.links,
                  "What-if: a path's bandwidth (GB/s) or latency (us), e.g. HtoD.pinned=bw:50,lat:2 "
                  "(repeatable; a path name or its first parts)")
      ->type_name("PATH=bw:GBPS,lat:US")
      ->allow_extra_args(false));
  cmd->add_flag("--overlap", options->whatif.overlap,
                "What-if: copies on their own streams, ordered only by the data they share (DVDG)");
  cmd->add_option("--kernel-scale", options->whatif.kernel_scale, "What-if: kernel durations times X")
      ->type_name("X")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--prefetch-managed", options->whatif.prefetch_managed,
                "What-if: managed memory kernels faulted in on demand is prefetched before them "
                "(a trace recorded with --unified-memory)");
  cmd->add_flag("--peer-copies", options->whatif.peer_copies,
                "What-if: data one GPU sends another through host memory (a copy to the host, then to "
                "the other GPU) goes peer to peer instead");
  cmd->add_flag("--graphs", options->whatif.graphs,
                "What-if: each steady step (without steps, the run) captured as CUDA graphs and replayed: "
                "no launch calls and no host time between them; regions end at synchronizations, pageable "
                "copies and allocations");
  options->output = printed_results(cmd);
  cmd->add_flag("--store", options->store,
                "Store the result in the trace (whatif_* tables); otherwise it is opened read-only");
  cmd->add_option("--steps", options->steps, "Longest critical-path steps to print (default 10)")
      ->type_name("N");
  options->output->force_option->description(
      "Replace the output file if it exists; --store into a trace still being recorded");
  cmd->callback([&result, options] {
    result = [options] {
      return reading_trace(options->trace, [&] { return run_whatif_command(*options); });
    };
  });
}

}  // namespace apptracer
