// `apptracer dvdg TRACE`: rebuilds the dynamic value dependence graph from a
// trace, stores it in the trace (dvdg_* tables), and exports or queries it.
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "apptracer/saturating.h"
#include "analyzer/commands.h"
#include "analyzer/dvdg/exporters.h"
#include "analyzer/dvdg/graph_builder.h"
#include "analyzer/dvdg/graph_store.h"
#include "analyzer/dvdg/graph_view.h"
#include "analyzer/dvdg/labels.h"
#include "analyzer/output_file.h"
#include "analyzer/progress.h"
#include "analyzer/dvdg/queries.h"
#include "apptracer/text_escape.h"
#include "analyzer/trace/trace.h"

namespace apptracer {

namespace {

struct DvdgOptions {
  std::string trace;
  bool no_store = false;
  std::shared_ptr<OutputOptions> output;
  // The files to export: -o's, and those of the aliases --dot FILE, ....
  std::vector<std::pair<std::string, std::string>> exports;  // format, path
  std::optional<int64_t> from_ns, to_ns, device;
  std::vector<std::string> nvtx, allocs;
  int64_t min_bytes = 0;
  bool collapse = false;
  bool ignore_exact = false;
  std::string why, consumers, lifetime;
};

std::vector<std::pair<int64_t, int64_t>> nvtx_windows(trace::Trace& trace,
                                                      const std::vector<std::string>& names) {
  std::vector<std::pair<int64_t, int64_t>> windows;
  for (const std::string& name : names) {
    size_t before = windows.size();
    for (const trace::Packed<NvtxRangeRow>& range : trace.rows<NvtxRangeRow>()) {
      if (range.name_id && trace.string(range.name_id) == name)
        windows.emplace_back(range.start_ns, range.end_ns.value_or(range.start_ns));
    }
    if (windows.size() == before)
      throw std::runtime_error("no NVTX range named '" + name + "' in the trace");
  }
  return windows;
}

int64_t resolve_allocation(const dvdg::Graph& graph, const std::string& text) {
  std::optional<uint32_t> location;
  if (std::optional<int64_t> address = dvdg::parse_address(text)) {
    location = dvdg::location_containing(graph, *address);
  } else {
    for (uint32_t i = 0; i < graph.locations.size(); ++i) {
      if (graph.locations[i].alloc_id && std::to_string(*graph.locations[i].alloc_id) == text)
        location = i;
    }
  }
  if (!location || !graph.locations[*location].alloc_id) {
    throw std::runtime_error("--alloc " + text +
                             ": no such allocation (give an allocations.id or an address 0x...)");
  }
  return *graph.locations[*location].alloc_id;
}

// False, after saying so, when the trace is still being recorded.
bool not_being_recorded(const std::string& trace) {
  std::string why;
  {
    std::string note;  // the same as the reason, said once below
    Database db = open_trace(trace, TraceAccess::ReadOnly, note);
    why = still_being_recorded(trace, db);
  }
  if (why.empty()) return true;
  std::fprintf(stderr,
               "apptracer: note: %s: the graph is built from what it holds so far and not stored "
               "(--force stores it anyway)\n",
               why.c_str());
  return false;
}

// The kinds of file the graph exports to, and the extensions that name them.
const std::vector<FileFormat>& export_formats() {
  static const std::vector<FileFormat> formats{{"dot", {".dot", ".gv"}},
                                               {"svg", {".svg"}},
                                               {"graphml", {".graphml"}},
                                               {"json", {".json"}},
                                               {"proto", {".pb"}}};
  return formats;
}

// Writes the graph (as `view` shows it) in `format` to `file`.
void export_graph(const dvdg::Graph& graph, const dvdg::GraphView& view, const std::string& format,
                  OutputFile& file) {
  if (format == "svg") {
    std::ostringstream dot_text;
    dvdg::write_dot(graph, view, dot_text);
    dvdg::render_svg(dot_text.str(), file.file_path());
  } else if (format == "dot") {
    dvdg::write_dot(graph, view, file.stream());
  } else if (format == "graphml") {
    dvdg::write_graphml(graph, view, file.stream());
  } else if (format == "json") {
    dvdg::write_json(graph, view, file.stream());
  } else {
    dvdg::write_proto(graph, view, file.stream());
  }
  file.commit();
}

void print_summary(const dvdg::Graph& graph, const DvdgOptions& options, bool stored) {
  std::printf("dvdg: %zu operations, %zu values, %zu edges", graph.ops.size(), graph.values.size(),
              graph.edge_count());
  if (size_t sets = graph.access_set_count(); sets > 0)
    std::printf(", %zu access sets (%zu dependences)", sets, graph.dependence_count());
  std::printf(
      stored ? "; stored in %s (dvdg_ops, dvdg_values, dvdg_edges)\n" : " (not stored)\n",
      options.trace.c_str());
  if (graph.broken_order_constraints > 0)
    std::printf("%zu ordering constraint(s) between ranks contradicted each other (clocks the merge "
                "aligned only approximately): the earliest operation went first\n",
                graph.broken_order_constraints);
  size_t uninitialized = 0;
  // Only ops that read memory holding no data have such edges: the others'
  // dependences are not gone through.
  for (uint32_t op = 0; op < graph.ops.size(); ++op) {
    if (!graph.ops[op].reads_uninitialized) continue;
    graph.for_each_edge(op, [&](const dvdg::Edge& edge) {
      if (!edge.uninitialized_read) return;
      // Only the first few: a loop reading garbage would otherwise flood the output.
      if (++uninitialized <= 10) {
        std::printf("uninitialized read: op %" PRIu32 " %s reads %s\n", edge.op + 1,
                    terminal_text(dvdg::op_name(graph, edge.op)).c_str(),
                    terminal_text(dvdg::value_label(graph, edge.src_value, ", ")).c_str());
      }
    });
  }
  if (uninitialized > 10) std::printf("... %zu uninitialized reads in all\n", uninitialized);
  size_t migrations = 0;
  int64_t migrated = 0;
  for (const dvdg::Op& op : graph.ops) {
    if (op.kind != dvdg::OpKind::Migration) continue;
    ++migrations;
    migrated = saturating_add(migrated, op.bytes);
  }
  if (migrations > 0) {
    std::printf("unified memory: %zu migration(s), %s moved\n", migrations,
                dvdg::format_bytes(migrated).c_str());
  }
  size_t opaque = 0, unseen = 0;
  for (const dvdg::Op& op : graph.ops) {
    opaque += op.arguments_unknown;
    unseen += op.writes_unseen && !op.arguments_unknown;
  }
  if (opaque > 0) {
    std::printf(
        "note: %zu kernel launch(es) without captured arguments (no kernel_args rows): what they "
        "read and wrote is not in the graph\n",
        opaque);
  }
  if (unseen > 0) {
    std::printf(
        "note: %zu kernel launch(es) write memory no argument points at (through arrays of "
        "pointers, a T** parameter, or through TMA tensor maps whose addresses did not resolve): "
        "what they wrote there is not in the graph, so memory allocated before them is not "
        "reported as read uninitialized\n",
        unseen);
  }
}

int run_dvdg(const DvdgOptions& options) {
  // Every export's file is checked before any work is done.
  std::vector<std::unique_ptr<OutputFile>> files;
  bool exports_to_stdout = false;
  for (const auto& [format, path] : options.exports) {
    files.push_back(std::make_unique<OutputFile>(path, std::vector<std::string>{options.trace},
                                                 options.output->force));
    exports_to_stdout = exports_to_stdout || (path == "-" && format != "svg");
  }
  // A graph stored while the trace still grows would be stale without a word.
  // The stored graph is the trace's best one: never the one that ignores --exact.
  bool store = !options.no_store && !options.ignore_exact &&
               (options.output->force || not_being_recorded(options.trace));
  dvdg::Graph graph;
  std::vector<std::pair<int64_t, int64_t>> windows;
  Progress progress("dvdg");
  {
    trace::Trace trace(options.trace, store ? TraceAccess::ReadWrite : TraceAccess::ReadOnly);
    try {
      graph = dvdg::build_graph_from_trace(
          trace, options.ignore_exact ? dvdg::KernelAccesses::Signatures : dvdg::KernelAccesses::Exact,
          &progress, dvdg::TraceRowsAfter::Released);
      windows = nvtx_windows(trace, options.nvtx);
    } catch (const SqliteError& error) {
      throw TraceError(options.trace + ": damaged or incomplete trace (" + error.what() + ")");
    }
    if (store) {
      progress.phase("storing the graph");
      try {
        dvdg::store_graph(trace.db(), graph);
      } catch (const SqliteError& error) {
        throw TraceError(options.trace + ": cannot store the graph (" + error.what() +
                         "); use --no-store to only export");
      }
    }
  }

  progress.finish();
  bool queried = !options.why.empty() || !options.consumers.empty() || !options.lifetime.empty();
  if (queried) std::cout << graph.origin.describe() << "\n";
  if (!options.why.empty()) {
    dvdg::print_why(graph, dvdg::resolve_value(graph, options.why), std::cout);
  }
  if (!options.consumers.empty()) {
    dvdg::print_consumers(graph, dvdg::resolve_value(graph, options.consumers), std::cout);
  }
  if (!options.lifetime.empty()) {
    dvdg::print_lifetime(graph, dvdg::resolve_target(graph, options.lifetime).location, std::cout);
  }

  // --from and --to count from the trace's start, as the times shown do.
  dvdg::ViewFilter filter;
  if (options.from_ns) filter.from_ns = graph.origin.ns + *options.from_ns;
  if (options.to_ns) filter.to_ns = graph.origin.ns + *options.to_ns;
  filter.device = options.device;
  filter.issue_windows = windows;
  filter.min_bytes = options.min_bytes;
  filter.collapse_iterations = options.collapse;
  filter.access_sets = true;
  for (const std::string& alloc : options.allocs)
    filter.alloc_ids.push_back(resolve_allocation(graph, alloc));

  if (!options.exports.empty()) {
    // A progress line would be drawn into, then erase, an export on the terminal.
    if (!exports_to_stdout) progress.phase("exporting");
    dvdg::GraphView view = dvdg::make_view(graph, filter);
    for (size_t i = 0; i < files.size(); ++i) export_graph(graph, view, options.exports[i].first, *files[i]);
    progress.finish();
  }
  if (!queried && !exports_to_stdout) print_summary(graph, options, store);
  return 0;
}

}  // namespace

void add_dvdg_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand(
      "dvdg",
      "Build the dynamic value dependence graph, store it in the trace, export or query it");
  auto options = std::make_shared<DvdgOptions>();
  input_files(cmd->add_option("trace", options->trace, "Trace database"))->required();
  cmd->add_flag("--no-store", options->no_store,
                "Do not write the dvdg_* tables (the trace is opened read-only)");
  options->output = written_files(
      cmd, "Export the graph to FILE ('-': standard output), as its extension says (.dot, .svg, "
           ".graphml, .json, .pb: an apptracer.dvdg.proto.Graph message) or --format",
      export_formats(), false);
  options->output->force_option->description(
      "Replace export files that exist; store the graph even in a trace still being recorded");
  // The older spellings, one option per format: --dot FILE is -o FILE --format dot.
  for (const FileFormat& format : export_formats()) {
    cmd->add_option_function<std::string>(
           "--" + format.name,
           [raw = options.get(), name = format.name](const std::string& path) {
             raw->exports.emplace_back(name, path);
           },
           "Same as -o FILE --format " + format.name)
        ->type_name("FILE");
  }
  cmd->add_option("--from", options->from_ns,
                  "Export only operations ending at or after NS (since the trace's start)")
      ->type_name("NS");
  cmd->add_option("--to", options->to_ns,
                  "Export only operations starting at or before NS (since the trace's start)")
      ->type_name("NS");
  // A range's name may hold a comma: the option repeats instead.
  values_hold_commas(cmd->add_option("--nvtx", options->nvtx,
                                     "Export only operations issued inside NVTX ranges named NAME "
                                     "(repeatable)")
                         ->type_name("NAME")
                         ->allow_extra_args(false));
  cmd->add_option("--alloc", options->allocs,
                  "Export only edges touching these allocations: id or 0xADDR (ALLOC,ALLOC or repeated)")
      ->type_name("ALLOC")
      ->allow_extra_args(false);
  cmd->add_option("--device", options->device, "Export only operations on this device")
      ->type_name("N");
  cmd->add_option("--min-bytes", options->min_bytes,
                  "Export only values of locations of at least N bytes")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--ignore-exact", options->ignore_exact,
                "Take kernels' accesses from their signatures even where --exact recorded what "
                "they touched, to compare the two graphs (nothing is stored)");
  cmd->add_flag("--collapse", options->collapse,
                "Fold repeated iterations of the same operation sequence into the first");
  cmd->add_option("--why", options->why,
                  "Print the operations that produced VALUE (vN, sN: a sub-allocation's latest "
                  "value, or 0xADDR)")
      ->type_name("VALUE");
  cmd->add_option("--consumers", options->consumers,
                  "Print the operations that read VALUE (vN, sN or 0xADDR)")
      ->type_name("VALUE");
  cmd->add_option("--lifetime", options->lifetime,
                  "Print when a tensor or buffer was allocated, written, read and freed (sN, "
                  "0xADDR, or vN: its region)")
      ->type_name("REGION");
  cmd->callback([&result, options] {
    result = [options] {
      if (!options->output->path.empty())
        options->exports.emplace_back(options->output->format, options->output->path);
      return run_dvdg(*options);
    };
  });
}

}  // namespace apptracer
