// `apptracer whatif TRACE --system system.json [changes] [--json FILE] [--store]`:
// the trace replayed on a measured machine, unchanged and with changes
// (whatif.h), beside the recording.
#include <fstream>
#include <iostream>
#include <memory>

#include "analyzer/commands.h"
#include "analyzer/output_file.h"
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
  std::string json;
  bool store = false;
  bool force = false;
  size_t steps = 10;
};

int run_whatif_command(WhatifCommandOptions& options) {
  options.whatif.numa_node = options.numa;
  whatif::WhatifResult result;
  {
    trace::Trace trace(options.trace, options.store ? TraceAccess::ReadWrite : TraceAccess::ReadOnly);
    if (options.store) refuse_store_while_recording(options.trace, trace.db(), options.force);
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
  if (options.json == "-") {
    std::cout << whatif::whatif_json(result);
    return 0;
  }
  if (!options.json.empty()) {
    OutputFile file(options.json, {options.trace}, options.force);
    file.stream() << whatif::whatif_json(result);
    file.commit();
  }
  whatif::write_whatif_text(std::cout, result, options.steps);
  if (options.store) std::cout << "stored in " << options.trace << " (whatif_runs, whatif_phases, "
                               << "whatif_transfers, whatif_critical_path)\n";
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
  cmd->add_option("--link", options->whatif.links,
                  "What-if: a path's bandwidth (GB/s) or latency (us), e.g. HtoD.pinned=bw:50,lat:2 "
                  "(repeatable; a path name or its first parts)")
      ->type_name("PATH=bw:GBPS,lat:US")
      ->allow_extra_args(false);
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
  cmd->add_option("--json", options->json, "Write the result as JSON to FILE ('-': standard output)")
      ->type_name("FILE");
  cmd->add_flag("--store", options->store,
                "Store the result in the trace (whatif_* tables); otherwise it is opened read-only");
  cmd->add_option("--steps", options->steps, "Longest critical-path steps to print (default 10)")
      ->type_name("N");
  cmd->add_flag("-f,--force", options->force,
                "Replace the --json file if it exists; --store into a trace still being recorded");
  cmd->callback([&result, options] {
    result = [options] {
      return reading_trace(options->trace, [&] { return run_whatif_command(*options); });
    };
  });
}

}  // namespace apptracer
