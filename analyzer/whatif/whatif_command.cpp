// `apptracer whatif TRACE --system system.json [changes] [--format table|csv|json] [-o FILE] [--store]`:
// the trace replayed on a measured machine, unchanged and with changes
// (whatif.h), beside the recording. `--checkpoint MODULE`: the peak memory
// with a module's activations recomputed (checkpoint_report.h), with or
// without a replay.
#include <fstream>
#include <iostream>
#include <memory>

#include "analyzer/commands.h"
#include "analyzer/output_file.h"
#include "analyzer/table/table_format.h"
#include "analyzer/trace/trace.h"
#include "analyzer/whatif/checkpoint_report.h"
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
  std::string checkpoint;  // a module whose activations are recomputed
  std::shared_ptr<std::optional<int64_t>> untraced_step_ns;
};

int run_whatif_command(WhatifCommandOptions& options) {
  if (options.whatif.system_path.empty() && options.checkpoint.empty())
    throw UsageError("whatif: give --system FILE, the machine to replay on (measure one with 'apptracer links -o "
                     "FILE'), or ask only about memory with --checkpoint MODULE");
  bool replay = !options.whatif.system_path.empty();
  if (!replay && (options.whatif.changes_anything() || options.store))
    throw UsageError("whatif: the changes and --store replay the trace: give --system FILE");
  options.whatif.numa_node = options.numa;
  options.whatif.untraced_step_ns = *options.untraced_step_ns;
  whatif::WhatifResult result;
  std::optional<whatif::CheckpointAnswer> checkpoint;
  PrintedOutput printed(*options.output, {options.trace, options.whatif.system_path,
                                          options.whatif.system2_path});
  {
    trace::Trace trace(options.trace, options.store ? TraceAccess::ReadWrite : TraceAccess::ReadOnly);
    if (options.store) refuse_store_while_recording(options.trace, trace.db(), options.output->force);
    if (!options.checkpoint.empty()) checkpoint = whatif::checkpoint_answer(trace, options.checkpoint);
    if (replay) result = whatif::run_whatif(trace, options.whatif);
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
    out << whatif::checkpoint_json(replay ? std::optional<std::string>(whatif::whatif_json(result)) : std::nullopt,
                                   checkpoint);
  } else if (format == OutputFormat::Csv) {
    std::vector<Table> tables;
    if (replay) tables = whatif::whatif_tables(result, options.steps);
    if (checkpoint) tables.push_back(whatif::checkpoint_table(*checkpoint));
    write_tables(out, tables, OutputFormat::Csv);
  } else {
    if (replay) whatif::write_whatif_text(out, result, options.steps);
    if (checkpoint) whatif::write_checkpoint_text(out, *checkpoint, replay);
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
                              "System file of the machine to replay on (apptracer links -o FILE); "
                              "needed but for --checkpoint alone"))
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
  cmd->add_flag("--no-syncs", options->whatif.no_syncs,
                "What-if: in each steady step (without steps, the run) the host no longer waits for the "
                "GPU: synchronizations and blocking copies back to the host return at once (a per-step "
                ".item(), .cpu() or torch.cuda.synchronize() taken out)");
  cmd->add_flag("--non-blocking", options->whatif.non_blocking,
                "What-if: in each steady step (without steps, the run) copies from host memory to a GPU are "
                "no longer waited for: the synchronization of the copy's stream right after it goes (PyTorch's non_blocking=True; with --pin, the "
                "pin_memory=True fix whole)");
  options->untraced_step_ns = untraced_step_option(cmd);
  cmd->add_option("--checkpoint", options->checkpoint,
                  "What-if: MODULE's activations recomputed in its backward instead of kept (activation "
                  "checkpointing): the peak memory and the time it costs a step; needs framework context")
      ->type_name("MODULE");
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
