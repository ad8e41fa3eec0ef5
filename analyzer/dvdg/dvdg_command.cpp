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
  bool force = false;
  std::string dot, svg, graphml, json, proto;
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

// An export's output file, checked before any work is done; null when not asked for.
std::unique_ptr<OutputFile> export_file(const std::string& path, const DvdgOptions& options) {
  return path.empty() ? nullptr
                      : std::make_unique<OutputFile>(path, std::vector<std::string>{options.trace},
                                                     options.force);
}

template <typename Writer>
void export_to(const std::unique_ptr<OutputFile>& file, Writer&& write) {
  if (!file) return;
  write(file->stream());
  file->commit();
}

void print_summary(const dvdg::Graph& graph, const DvdgOptions& options, bool stored) {
  std::printf("dvdg: %zu operations, %zu values, %zu edges", graph.ops.size(), graph.values.size(),
              graph.edge_count());
  std::printf(
      stored ? "; stored in %s (dvdg_ops, dvdg_values, dvdg_edges)\n" : " (not stored)\n",
      options.trace.c_str());
  if (graph.broken_order_constraints > 0)
    std::printf("%zu ordering constraint(s) between ranks contradicted each other (clocks the merge "
                "aligned only approximately): the earliest operation went first\n",
                graph.broken_order_constraints);
  size_t uninitialized = 0;
  graph.for_each_edge([&](const dvdg::Edge& edge) {
    if (!edge.uninitialized_read) return;
    // Only the first few: a loop reading garbage would otherwise flood the output.
    if (++uninitialized <= 10) {
      std::printf("uninitialized read: op %" PRIu32 " %s reads %s\n", edge.op + 1,
                  terminal_text(dvdg::op_name(graph, edge.op)).c_str(),
                  terminal_text(dvdg::value_label(graph, edge.src_value, ", ")).c_str());
    }
  });
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
  std::unique_ptr<OutputFile> dot = export_file(options.dot, options);
  std::unique_ptr<OutputFile> svg = export_file(options.svg, options);
  std::unique_ptr<OutputFile> graphml = export_file(options.graphml, options);
  std::unique_ptr<OutputFile> json = export_file(options.json, options);
  std::unique_ptr<OutputFile> proto = export_file(options.proto, options);
  // A graph stored while the trace still grows would be stale without a word.
  // The stored graph is the trace's best one: never the one that ignores --exact.
  bool store = !options.no_store && !options.ignore_exact &&
               (options.force || not_being_recorded(options.trace));
  dvdg::Graph graph;
  std::vector<std::pair<int64_t, int64_t>> windows;
  Progress progress("dvdg");
  {
    trace::Trace trace(options.trace, store ? TraceAccess::ReadWrite : TraceAccess::ReadOnly);
    try {
      graph = dvdg::build_graph_from_trace(
          trace, options.ignore_exact ? dvdg::KernelAccesses::Signatures : dvdg::KernelAccesses::Exact,
          &progress);
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
  for (const std::string& alloc : options.allocs)
    filter.alloc_ids.push_back(resolve_allocation(graph, alloc));

  bool exporting = !options.dot.empty() || !options.svg.empty() || !options.graphml.empty() ||
                   !options.json.empty() || !options.proto.empty();
  // Exports to standard output must stay parseable.
  bool exports_to_stdout =
      options.dot == "-" || options.graphml == "-" || options.json == "-" || options.proto == "-";
  if (exporting) {
    // A progress line would be drawn into, then erase, an export on the terminal.
    if (!exports_to_stdout) progress.phase("exporting");
    dvdg::GraphView view = dvdg::make_view(graph, filter);
    export_to(dot, [&](std::ostream& out) { dvdg::write_dot(graph, view, out); });
    export_to(graphml, [&](std::ostream& out) { dvdg::write_graphml(graph, view, out); });
    export_to(json, [&](std::ostream& out) { dvdg::write_json(graph, view, out); });
    export_to(proto, [&](std::ostream& out) { dvdg::write_proto(graph, view, out); });
    if (svg) {
      std::ostringstream dot_text;
      dvdg::write_dot(graph, view, dot_text);
      dvdg::render_svg(dot_text.str(), svg->file_path());
      svg->commit();
    }
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
  cmd->add_flag("--force", options->force,
                "Replace export files that exist; store the graph even in a trace still being "
                "recorded");
  cmd->add_option("--dot", options->dot, "Write Graphviz DOT to FILE ('-': standard output)")
      ->type_name("FILE");
  cmd->add_option("--svg", options->svg, "Render the graph to an SVG FILE with Graphviz's dot")
      ->type_name("FILE");
  cmd->add_option("--graphml", options->graphml, "Write GraphML to FILE ('-': standard output)")
      ->type_name("FILE");
  cmd->add_option("--json", options->json, "Write JSON to FILE ('-': standard output)")
      ->type_name("FILE");
  cmd->add_option("--proto", options->proto, "Write an apptracer.dvdg.proto.Graph message to FILE")
      ->type_name("FILE");
  cmd->add_option("--from", options->from_ns,
                  "Export only operations ending at or after NS (since the trace's start)")
      ->type_name("NS");
  cmd->add_option("--to", options->to_ns,
                  "Export only operations starting at or before NS (since the trace's start)")
      ->type_name("NS");
  cmd->add_option("--nvtx", options->nvtx,
                  "Export only operations issued inside NVTX ranges named NAME (repeatable)")
      ->type_name("NAME")
      ->allow_extra_args(false);
  cmd->add_option("--alloc", options->allocs,
                  "Export only edges touching this allocation: id or 0xADDR (repeatable)")
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
  cmd->callback([&result, options] { result = [options] { return run_dvdg(*options); }; });
}

}  // namespace apptracer
