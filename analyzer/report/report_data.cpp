#include "analyzer/report/report_data.h"

#include <malloc.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <future>
#include <map>
#include <tuple>
#include <vector>

#include "analyzer/diagnose/analyses.h"
#include "analyzer/diagnose/diagnosis.h"
#include "apptracer/enums.h"
#include "analyzer/diagnose/findings_output.h"
#include "analyzer/dvdg/graph_view.h"
#include "analyzer/dvdg/exporters.h"
#include "analyzer/dvdg/labels.h"
#include "analyzer/diagnose/link_model_choice.h"
#include "analyzer/diagnose/measured_transfer_cost.h"
#include "analyzer/report/bandwidth_against_peak.h"
#include "analyzer/report/changed_rows.h"
#include "analyzer/report/memory_section.h"
#include "analyzer/report/perfetto_embed.h"
#include "analyzer/report/report_units.h"
#include "analyzer/diagnose/rules.h"
#include "analyzer/report/step_summary.h"
#include "analyzer/report/time_breakdown.h"
#include "analyzer/diagnose/trace_facts.h"
#include "analyzer/report/unified_memory_moves.h"
#include "analyzer/report/whatif_section.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/trace/by_kernel_name.h"
#include "analyzer/trace/remote_kernel_traffic.h"
#include "analyzer/table/table_format.h"
#include "analyzer/trace/short_names.h"

namespace apptracer::report {

namespace {

using diagnose::TraceFacts;
using diagnose::Transfer;
using nlohmann::json;

json overview(trace::Trace& trace, const TraceFacts& facts, const std::string& path) {
  json devices = json::array();
  for (const diagnose::Device& d : facts.ops().devices())
    devices.push_back({{"id", d.id()}, {"name", d.name}, {"numa_node", d.numa_node().value_or(-1)}});
  return {{"trace", path},
          {"command_line", trace.meta("command_line")},
          {"host", trace.meta("host")},
          {"status", trace.meta("status")},
          {"tracer_version", trace.meta("tracer_version")},
          {"time_origin", facts.origin.describe()},
          {"devices", devices}};
}

json summary(const TraceFacts& facts, const std::vector<Migration>& moves,
             const diagnose::TransferCost& cost) {
  json devices = json::array();
  for (auto& [device, busy] : facts.busy_by_device()) {
    devices.push_back({{"device", device},
                       {"busy_ns", diagnose::covered_ns(busy, INT64_MIN, INT64_MAX)}});
  }
  struct PathTotals {
    diagnose::TransferPath path;
    int64_t count = 0, bytes = 0, ns = 0;
  };
  std::map<std::string, PathTotals> paths;
  auto add = [&](const std::string& name, const diagnose::TransferPath& path, int64_t bytes, int64_t ns) {
    PathTotals& totals = paths[name];
    totals.path = path;
    ++totals.count;
    totals.bytes = saturating_add(totals.bytes, bytes);
    totals.ns = saturating_add(totals.ns, ns);
  };
  for (const Transfer& t : facts.ops().copies()) {
    if (t.kind() == CopyKind::Prefetch) continue;  // moved by its migrations, below
    diagnose::TransferPath path = diagnose::path_of(t);
    path.numa_node.reset();
    add(diagnose::path_name(path), path, t.bytes(), t.gpu_ns());
  }
  for (const Migration& m : moves) {
    add(diagnose::path_name(m.path) + " (unified-memory migrations)", m.path, m.bytes,
        elapsed_ns(m.start_ns, m.end_ns));
  }
  json by_path = json::array();
  for (auto& [name, totals] : paths) {
    std::optional<double> peak = peak_gbps(cost, totals.path);
    double gbps = totals.ns > 0 ? double(totals.bytes) / totals.ns : 0.0;
    by_path.push_back({{"path", name},
                       {"count", totals.count},
                       {"bytes", totals.bytes},
                       {"time_ns", totals.ns},
                       {"gbps", totals.ns > 0 ? json(gbps) : json()},
                       {"peak_gbps", peak ? json(*peak) : json()},
                       {"above_peak", above_peak_reason(cost, totals.path, gbps, peak)}});
  }
  int64_t kernel_ns = 0;
  for (const diagnose::Kernel& k : facts.ops().kernels()) kernel_ns = saturating_add(kernel_ns, k.gpu_ns());
  return {{"span_ns", facts.span_ns()},
          {"kernels", facts.ops().kernels().size()},
          {"kernel_ns", kernel_ns},
          {"copies", facts.ops().copies().size()},
          {"memsets", facts.ops().memsets().size()},
          {"migrations", moves.size()},
          {"allocations", facts.ops().allocations().size()},
          {"devices", devices},
          {"time", where_time_went(facts, moves)},
          {"paths", by_path}};
}

// Kernels' loads and stores in another GPU's or pinned host memory, per
// path: bytes no copy moved.
json kernel_traffic(trace::Trace& trace) {
  json rows = json::array();
  for (const trace::TrafficTotal& total : trace::traffic_by_path(trace::remote_kernel_traffic(trace))) {
    rows.push_back({{"path", total.path},
                    {"kind", total.kind},
                    {"kernels", total.kernels},
                    {"bytes", total.bytes},
                    {"bytes_are", trace::bytes_are(total.exact)}});
  }
  return rows;
}

json top_kernels(const TraceFacts& facts) {
  trace::ByKernelName<std::pair<int64_t, int64_t>> by_name;  // count, GPU ns
  for (const diagnose::Kernel& k : facts.ops().kernels()) {
    auto& entry = by_name[k.name];
    ++entry.first;
    entry.second = saturating_add(entry.second, k.gpu_ns());
  }
  std::vector<std::pair<std::string_view, std::pair<int64_t, int64_t>>> sorted(by_name.begin(), by_name.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  if (sorted.size() > 25) sorted.resize(25);
  // Shown by their short names, as stats shows them (alike ones numbered).
  Table names{"", {"name"}, {}};
  for (const auto& [name, entry] : sorted) names.rows.push_back({std::string(name)});
  set_text_form(names, "name", trace::short_kernel_name_cell);
  bool numbered = false;
  std::vector<std::vector<Cell>> short_names = rows_in_text_form(names, names.rows.size(), numbered);
  json list = json::array();
  for (size_t i = 0; i < sorted.size(); ++i) {
    auto& [name, entry] = sorted[i];
    list.push_back({{"name", std::string(name)}, {"short_name", std::get<std::string>(short_names[i][0])},
                    {"count", entry.first}, {"total_ns", entry.second},
                    {"mean_ns", entry.second / std::max<int64_t>(1, entry.first)}});
  }
  return list;
}

// Where the trace names PyTorch's modules and ops (framework context): the
// work issued in each, as `stats --report modules` and `--report ops` list
// it, by GPU time (the first 25 of each); null where it names none.
json modules_and_ops(trace::Trace& trace) {
  if (!trace::has_framework_ranges(trace)) return nullptr;
  auto first_rows = [](ReportOutput output) {
    Table& table = output.tables.front();
    if (table.rows.size() > 25) table.rows.resize(25);
    return diagnose::table_json(table);
  };
  auto [modules, ops] = modules_and_ops_reports(trace);
  std::string note = modules.note;
  return {{"modules", first_rows(std::move(modules))}, {"ops", first_rows(std::move(ops))}, {"note", note}};
}

json transfers(const TraceFacts& facts, const diagnose::TransferCost& cost) {
  std::vector<const Transfer*> timed;
  for (const Transfer& t : facts.ops().copies()) {
    if (t.timed() && t.gpu_ns() > 0 && t.kind() != CopyKind::Prefetch) timed.push_back(&t);
  }
  std::stable_sort(timed.begin(), timed.end(),
                   [](const Transfer* a, const Transfer* b) { return a->bytes() > b->bytes(); });
  if (timed.size() > kTransferLimit) timed.resize(kTransferLimit);
  std::map<std::string, std::optional<double>> peaks;
  json list = json::array();
  for (const Transfer* t : timed) {
    diagnose::TransferPath path = diagnose::path_of(*t);
    path.numa_node.reset();
    std::string name = diagnose::path_name(path);
    if (!peaks.count(name)) peaks[name] = peak_gbps(cost, path);
    double gbps = double(t->bytes()) / t->gpu_ns();
    list.push_back({{"id", t->id()},
                    {"path", name},
                    {"bytes", t->bytes()},
                    {"time_ns", t->gpu_ns()},
                    {"gbps", gbps},
                    {"peak_gbps", peaks[name] ? json(*peaks[name]) : json()},
                    {"above_peak", above_peak_reason(cost, path, gbps, peaks[name])},
                    {"start_ms", ms(facts.origin.since(*t->gpu_start_ns()))}});
  }
  return list;
}

// GPU work per stream, migrations per device and the host's syncs, over the
// steady steps where the program has them, else over the program's work:
// start-up (the tracer's, the program's) is left out.
// What a timeline bar is, in the order of its name: bars of one lane
// starting and ending together are shown in that order.
enum class BarKind : uint8_t { Copy, Kernel, Memset, Migration, Sync };

const char* bar_kind_name(BarKind kind) {
  switch (kind) {
    case BarKind::Copy: return "copy";
    case BarKind::Kernel: return "kernel";
    case BarKind::Memset: return "memset";
    case BarKind::Migration: return "migration";
    case BarKind::Sync: return "sync";
  }
  return "";
}

// A training trace has a bar per kernel, millions: each lane's bars of one
// kind are held apart, 16 bytes each, in lists made at their size, and
// merged in order as they are shown.
struct Span {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};
constexpr size_t kBarKinds = static_cast<size_t>(BarKind::Sync) + 1;
using LaneBars = std::array<std::vector<Span>, kBarKinds>;  // by kind

json timeline(const TraceFacts& facts, const std::vector<Migration>& moves, std::optional<WorkWindow> steady) {
  WorkWindow window = steady ? *steady : work_window(facts, moves);
  auto lane_name = [](std::optional<int64_t> device, std::optional<int64_t> stream) {
    return "GPU " + std::to_string(device.value_or(0)) + " stream " +
           (stream ? std::to_string(*stream) : std::string("?"));
  };
  // Calls `bar(lane, start_ns, end_ns, kind)` for each bar in the window.
  auto each_bar = [&](auto&& bar) {
    auto in_window = [&](int64_t start_ns, int64_t end_ns, BarKind kind, auto&& lane) {
      if (end_ns >= window.start_ns && start_ns <= window.end_ns) bar(lane(), start_ns, end_ns, kind);
    };
    for (const diagnose::Kernel& k : facts.ops().kernels()) {
      if (k.timed())
        in_window(*k.row->gpu_start_ns, *k.row->gpu_end_ns, BarKind::Kernel,
                  [&] { return lane_name(k.row->device, k.row->stream); });
    }
    for (const auto* list : {&facts.ops().copies(), &facts.ops().memsets()}) {
      for (const Transfer& t : *list) {
        if (t.timed())
          in_window(*t.gpu_start_ns(), *t.gpu_end_ns(), t.is_memset() ? BarKind::Memset : BarKind::Copy,
                    [&] { return lane_name(t.device(), t.stream()); });
      }
    }
    for (const Migration& m : moves) {
      in_window(m.start_ns, m.end_ns, BarKind::Migration, [&] {
        return "GPU " + std::to_string(m.path.device.value_or(0)) + " unified-memory migrations";
      });
    }
    for (const diagnose::Sync& s : facts.ops().syncs())
      in_window(s.start_ns(), s.end_ns(), BarKind::Sync, [] { return std::string("host: synchronizations"); });
  };
  std::map<std::string, LaneBars> lanes;  // by name, the order they are shown in
  {
    std::map<std::string, std::array<size_t, kBarKinds>> counts;
    each_bar([&](std::string lane, int64_t, int64_t, BarKind kind) { ++counts[std::move(lane)][static_cast<size_t>(kind)]; });
    for (const auto& [lane, count] : counts) {
      for (size_t kind = 0; kind < kBarKinds; ++kind) lanes[lane][kind].reserve(count[kind]);
    }
  }
  each_bar([&](const std::string& lane, int64_t start_ns, int64_t end_ns, BarKind kind) {
    lanes.find(lane)->second[static_cast<size_t>(kind)].push_back({start_ns, end_ns});
  });
  // Bars closer than this are merged so a lane stays drawable.
  int64_t resolution =
      std::max<int64_t>(1, elapsed_ns(window.start_ns, window.end_ns) / static_cast<int64_t>(kTimelineIntervalLimit));
  json out = json::array();
  for (auto& [name, bars] : lanes) {
    for (std::vector<Span>& list : bars) {
      std::sort(list.begin(), list.end(),
                [](const Span& a, const Span& b) { return std::tie(a.start_ns, a.end_ns) < std::tie(b.start_ns, b.end_ns); });
    }
    json shown = json::array();
    std::optional<int64_t> start, end;
    BarKind kind = BarKind::Kernel;
    auto flush = [&] {
      if (end) shown.push_back({ms(facts.origin.since(*start)), ms(facts.origin.since(*end)), bar_kind_name(kind)});
    };
    // The lane's bars by start, end and kind, the next of each kind's list in turn.
    std::array<size_t, kBarKinds> next{};
    for (;;) {
      std::optional<size_t> first;
      for (size_t k = 0; k < kBarKinds; ++k) {
        if (next[k] == bars[k].size()) continue;
        const Span& bar = bars[k][next[k]];
        const Span* earliest = first ? &bars[*first][next[*first]] : nullptr;
        if (!earliest || std::tie(bar.start_ns, bar.end_ns) < std::tie(earliest->start_ns, earliest->end_ns)) first = k;
      }
      if (!first) break;
      const Span& bar = bars[*first][next[*first]++];
      BarKind bar_kind = static_cast<BarKind>(*first);
      if (end && bar_kind == kind && saturating_sub(bar.start_ns, *end) < resolution) {
        end = std::max(*end, bar.end_ns);
        continue;
      }
      flush();
      start = bar.start_ns;
      end = bar.end_ns;
      kind = bar_kind;
    }
    flush();
    LaneBars().swap(bars);
    if (!shown.empty()) out.push_back({{"lane", name}, {"bars", std::move(shown)}});
  }
  return {{"lanes", std::move(out)},
          {"steady_steps", steady.has_value()},
          {"start_ms", ms(facts.origin.since(window.start_ns))},
          {"end_ms", ms(facts.origin.since(window.end_ns))},
          {"trace_end_ms", ms(facts.origin.since(facts.end_ns()))}};
}

// The GPU time of the work one thread issued, by issue time, with running
// totals: the time issued in any span is two lookups, so nested NVTX ranges
// cost a log factor, not their depth times the launches inside. The totals
// replace each item's own time in place, in 64 bits; only a thread whose
// totals would overflow them keeps a 128-bit list beside.
class IssuedGpuTime {
 public:
  void reserve(size_t items) { work_.reserve(items); }
  void add(int64_t issued_ns, int64_t gpu_ns) { work_.emplace_back(issued_ns, gpu_ns); }

  void sum_up() {
    std::sort(work_.begin(), work_.end());
    int64_t total = 0;
    bool fits = std::all_of(work_.begin(), work_.end(), [&](const auto& item) {
      return !__builtin_add_overflow(total, item.second, &total);
    });
    if (!fits) {
      wide_before_.assign(1, 0);
      for (const auto& [issued, gpu] : work_) wide_before_.push_back(wide_before_.back() + gpu);
      return;
    }
    total = 0;
    for (auto& [issued, gpu] : work_) gpu = total += gpu;
  }

  // The GPU time of the work issued from `start_ns` to `end_ns`, inclusive.
  int64_t between(int64_t start_ns, int64_t end_ns) const {
    auto by_issue = [](const std::pair<int64_t, int64_t>& item, int64_t ns) { return item.first < ns; };
    size_t from = static_cast<size_t>(std::lower_bound(work_.begin(), work_.end(), start_ns, by_issue) - work_.begin());
    size_t to = static_cast<size_t>(
        std::upper_bound(work_.begin(), work_.end(), end_ns,
                         [](int64_t ns, const std::pair<int64_t, int64_t>& item) { return ns < item.first; }) -
        work_.begin());
    if (to <= from) return 0;
    __int128 total = wide_before_.empty() ? __int128{work_[to - 1].second} - (from ? work_[from - 1].second : 0)
                                          : wide_before_[to] - wide_before_[from];
    return static_cast<int64_t>(std::clamp<__int128>(total, INT64_MIN, INT64_MAX));
  }

 private:
  // Issue time, then the GPU ns of work_[0..i] (each item's own where
  // wide_before_ holds the totals).
  std::vector<std::pair<int64_t, int64_t>> work_;
  std::vector<__int128> wide_before_;  // GPU ns of work_[0..i), where 64 bits overflow
};

json nvtx_breakdown(const TraceFacts& facts) {
  // Each thread's work held at its count: grown by doubling, a million
  // launches' (16 MB) took twice that and more while it grew, at the
  // report's peak.
  std::map<int64_t, size_t> counts;  // by tid
  auto each_work = [&](auto&& visit) {
    auto issued_by = [&](std::optional<int64_t> correlation, int64_t gpu_ns) {
      if (const diagnose::HostCall* call = facts.ops().call(correlation)) visit(*call, gpu_ns);
    };
    for (const diagnose::Kernel& k : facts.ops().kernels()) issued_by(k.row->call_correlation_id, k.gpu_ns());
    for (const Transfer& t : facts.ops().copies()) issued_by(t.correlation(), t.gpu_ns());
    for (const Transfer& t : facts.ops().memsets()) issued_by(t.correlation(), t.gpu_ns());
  };
  each_work([&](const diagnose::HostCall& call, int64_t) { ++counts[call.tid()]; });
  std::map<int64_t, IssuedGpuTime> issued;  // by tid
  for (const auto& [tid, count] : counts) issued[tid].reserve(count);
  each_work([&](const diagnose::HostCall& call, int64_t gpu_ns) { issued[call.tid()].add(call.start_ns(), gpu_ns); });
  for (auto& [tid, thread] : issued) thread.sum_up();
  std::map<std::string, std::tuple<int64_t, int64_t, int64_t>> by_name;  // count, ns, gpu ns
  for (const diagnose::NvtxRange& r : facts.ops().nvtx()) {
    auto& [count, ns, gpu] = by_name[std::string(r.name)];
    ++count;
    ns = saturating_add(ns, elapsed_ns(r.start_ns(), r.end_ns()));
    for (const auto& [tid, thread] : issued) {
      if (r.tid() && *r.tid() != tid) continue;
      gpu = saturating_add(gpu, thread.between(r.start_ns(), r.end_ns()));
    }
  }
  json out = json::array();
  for (auto& [name, totals] : by_name) {
    auto [count, ns, gpu] = totals;
    out.push_back({{"name", name}, {"count", count}, {"total_ns", ns}, {"gpu_ns", gpu}});
  }
  return out;
}

json series_json(const std::vector<diagnose::Series>& all) {
  json out = json::array();
  for (const diagnose::Series& s : all) {
    json points = json::array();
    size_t step = std::max<size_t>(1, s.points.size() / kSeriesPointLimit);
    for (size_t i = 0; i < s.points.size(); i += step) points.push_back({ms(s.points[i].first), s.points[i].second});
    out.push_back({{"name", s.name}, {"points", points}});
  }
  return out;
}

json dvdg_json(const dvdg::Graph& graph) {
  dvdg::ViewFilter filter;
  filter.collapse_iterations = true;
  filter.value_limit = kGraphValueLimit;
  dvdg::GraphView view = dvdg::make_view(graph, filter);
  std::vector<bool> kept(graph.values.size(), false);
  for (uint32_t v : view.values) kept[v] = true;
  json values = json::array();
  for (uint32_t v : view.values) {
    const dvdg::Value& value = graph.values[v];
    const dvdg::Location& where = graph.locations[value.location];
    values.push_back({{"id", dvdg::value_ref(v)},
                      {"label", dvdg::value_label(graph, v, "\n")},
                      {"location", value.location},
                      {"location_name", dvdg::location_name(graph, value.location)},
                      {"version", value.version},
                      {"device_memory", is_device_memory(where.memory)},
                      {"uninitialized", value.read_uninitialized}});
  }
  json edges = json::array();
  json ops = json::object();
  for (const dvdg::ViewEdge& e : view.edges) {
    if (!kept[e.src_value] || !kept[e.dst_value]) continue;
    const dvdg::Edge& edge = e.edge;
    std::string op = std::to_string(int64_t{edge.op} + 1);
    if (!ops.contains(op)) {
      ops[op] = {{"name", dvdg::view_op_name(graph, view, edge.op)},
                 {"kind", std::string(trace::to_string(graph.ops[edge.op].kind))},
                 {"start_ns", graph.ops[edge.op].start_ns}};
    }
    edges.push_back({{"source", dvdg::value_ref(e.src_value)},
                     {"target", dvdg::value_ref(e.dst_value)},
                     {"op", op},
                     {"kind", std::string(dvdg::to_string(edge.kind))},
                     {"bytes", edge.bytes >= 0 ? json(edge.bytes) : json()}});
  }
  return {{"values", values},
          {"edges", edges},
          {"ops", ops},
          {"total_values", view.values_shown},
          {"graph_values", graph.values.size()},
          {"limit", kGraphValueLimit}};
}

// The Perfetto timeline as base64, or null past kEmbeddedTimelineLimit.
json perfetto_json(trace::Trace& trace) {
  std::optional<std::string> bytes = perfetto_timeline(trace, kEmbeddedTimelineLimit);
  if (!bytes) return {{"base64", nullptr}, {"limit", kEmbeddedTimelineLimit}};
  return {{"base64", base64(*bytes)}, {"bytes", bytes->size()}};
}

json analyses_json(const TraceFacts& facts) {
  json analyses = json::array();
  for (const Table& table : diagnose::all_analyses(facts, diagnose::Thresholds{})) {
    // Its peak over 1% bins of the whole trace is mostly idle time: the
    // copies' rate over their busy time says how fast they went.
    analyses.push_back(diagnose::table_json(table.name == "memory_bandwidth" ? copy_bandwidth(facts) : table));
  }
  return analyses;
}

// The sections read from the whole run's facts (start-up included), by
// name, each as CBOR once made: as JSON values they would stack under the
// transients of the sections made after them.
using SectionsCbor = std::map<std::string, std::vector<uint8_t>>;

SectionsCbor whole_run_sections(trace::Trace& trace, const TraceFacts& facts, const std::string& path,
                                const std::string& system_file, Progress* progress) {
  SectionsCbor sections;
  // A section's JSON is millions of small nodes, which the heap keeps
  // once freed (their chunks are not merged back until asked): given back
  // as soon as the section is CBOR, or the timeline's 20 MB stayed resident
  // under every section made after it.
  auto keep = [&](const char* name, auto&& make) {
    std::vector<uint8_t> bytes = json::to_cbor(make());
    // Held through the steady steps' rules, where the report's peak is:
    // grown by doubling, the timeline's 3.7 MB had 0.8 MB more behind it.
    bytes.shrink_to_fit();
    sections[name] = std::move(bytes);
    malloc_trim(0);
  };
  diagnose::LinkModel model = diagnose::choose_link_model(facts, system_file);
  show_phase(progress, "analyses, plots and tables");
  // The HTA tables read only the facts: on a thread of their own beside the
  // sections that read the trace (they took a third of this phase). What
  // both read is made before it starts, so neither thread makes it.
  const trace::TraceOperations& ops = facts.ops();
  ops.kernels();
  ops.copies();
  ops.memsets();
  ops.calls();
  ops.span();
  facts.busy_by_device();
  std::future<std::vector<uint8_t>> analyses =
      std::async(std::launch::async, [&] { return json::to_cbor(analyses_json(facts)); });
  std::vector<Migration> moves = migrations(facts);
  keep("overview", [&] { return overview(trace, facts, path); });
  keep("modules", [&] { return modules_and_ops(trace); });
  keep("kernel_traffic", [&] { return kernel_traffic(trace); });
  keep("kernels", [&] { return top_kernels(facts); });
  keep("transfers", [&] { return transfers(facts, *model.cost); });
  sections["analyses"] = analyses.get();
  sections["analyses"].shrink_to_fit();
  keep("step", [&] { return step_summary(trace, facts); });
  keep("summary", [&] { return summary(facts, moves, *model.cost); });
  // The GPU's busy intervals' last readers are done (the HTA tables', the
  // summary's, the step table's).
  facts.release_busy_by_device();
  // The memory section's what-if (33 MB at a million kernels) is made
  // without those intervals (34 MB): beside them it set the report's peak.
  show_phase(progress, "memory");
  keep("memory", [&] { return memory_section(trace, facts.graph, facts.memory_model, kSeriesPointLimit); });
  show_phase(progress, "timeline and graph");
  keep("timeline", [&] { return timeline(facts, moves, steady_window(trace)); });
  keep("nvtx", [&] { return nvtx_breakdown(facts); });
  keep("bandwidth", [&] { return series_json(diagnose::bandwidth_series(facts, 200)); });
  keep("queue", [&] { return series_json(diagnose::queue_series(facts, kSeriesPointLimit)); });
  keep("dvdg", [&] { return dvdg_json(facts.graph); });
  return sections;
}

}  // namespace

json report_data(trace::Trace& trace, const std::string& path, const std::string& system_file,
                 const trace::StepSelection& steps, std::optional<int64_t> untraced_step_ns, Progress* progress) {
  // What `apptracer diagnose TRACE [--system FILE]` finds, in its order: the
  // steady steps where the program has them. On a Trace of its own (with
  // its own rows, freed on return), which diagnose_trace limits to those
  // steps; the rest of the report is the whole run's, made from the facts
  // the diagnosis reads of it while it holds them, so they are read once.
  // The whole run's sections wait for the steady steps' rules as CBOR: as a
  // tree of JSON values (the timeline's bars alone 16 MB at a million
  // kernels) they were part of the report's resident peak, there.
  SectionsCbor whole_run;
  diagnose::Diagnosis diagnosis;
  {
    trace::Trace steady(trace.db(), trace.path());
    diagnose::DiagnosisRequest request;
    request.system = system_file;
    request.steps = steps;
    request.untraced_step_ns = untraced_step_ns;
    request.with_whole_run = [&](trace::Trace& whole, const TraceFacts& facts) {
      whole_run = whole_run_sections(whole, facts, path, system_file, progress);
    };
    diagnosis = diagnose::diagnose_trace(steady, request, progress);
  }
  json data = json::object();
  for (auto& [name, bytes] : whole_run) {
    data[name] = json::from_cbor(bytes);
    std::vector<uint8_t>().swap(bytes);
  }
  // The what-if replays after the diagnosis, so its graphs are freed first.
  if (steps.any()) trace.limit_to_steps(steps);
  show_phase(progress, "what-if");
  data["whatif"] = {{"runs", whatif_runs(trace, system_file, untraced_step_ns)},
                    {"stored", stored_whatif_tables(trace.db())}};
  data["perfetto"] = perfetto_json(trace);  // shows its own progress: "report: timeline"
  const std::vector<diagnose::Finding>& found = diagnosis.findings;
  size_t shown = diagnose::shown_by_default(found);
  data["link_model"] = diagnosis.link_model;
  data["findings"] = findings_to_show(diagnose::findings_json(found, shown));
  data["more_findings"] =
      findings_to_show(diagnose::findings_json({found.begin() + static_cast<std::ptrdiff_t>(shown), found.end()}));
  data["diagnosis_notes"] = diagnosis.notes;
  return data;
}

json findings_to_show(json findings) {
  for (json& finding : findings) {
    json short_names = json::array();
    for (const json& name : finding["where"]["names"]) short_names.push_back(trace::short_kernel_name(name.get<std::string>()));
    finding["where"]["short_names"] = std::move(short_names);
    if (finding["details"].is_null()) continue;
    Table details{"", finding["details"]["columns"].get<std::vector<std::string>>(), {}};
    for (const json& row : finding["details"]["rows"]) {
      std::vector<Cell> cells;
      for (const json& cell : row) {
        if (cell.is_string()) cells.emplace_back(cell.get<std::string>());
        else if (cell.is_number_integer()) cells.emplace_back(cell.get<int64_t>());
        else if (cell.is_number()) cells.emplace_back(cell.get<double>());
        else cells.emplace_back();
      }
      details.rows.push_back(std::move(cells));
    }
    finding["details"]["short_rows"] = diagnose::table_json(diagnose::details_in_text_form(details))["rows"];
  }
  return findings;
}

json comparison_data(const std::string& a, const std::string& b, const diff::TraceComparison& comparison) {
  json tables = json::array();
  for (const Table& table : comparison.tables) {
    Table changed{table.name, table.columns, {}};
    for (const auto& row : table.rows) {
      if (changed_beyond_threshold(table, row)) changed.rows.push_back(row);
    }
    json shown = diagnose::table_json(changed);
    shown["unchanged"] = table.rows.size() - changed.rows.size();
    tables.push_back(std::move(shown));
  }
  return {{"a", a},
          {"b", b},
          {"notes", comparison.notes},
          {"threshold_pct", 100 * kChangeThreshold},
          {"time_floor_ns", kTimeFloorNs},
          {"tables", tables}};
}

}  // namespace apptracer::report
