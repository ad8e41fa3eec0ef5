// Per kernel name (grouped like the kernels report: demangled, else mangled),
// for kernels that used managed memory or had unified-memory records during
// them: the first launch next to the mean of the later ones. Managed data
// usually migrates on first use, so the first launch pays for the migration
// (bytes_in: HtoD and DtoD bytes that arrived on its device while it ran;
// fault_groups: GPU page-fault groups it raised) and later ones should not:
// this table shows whether they do and what it costs in GPU time.
//
// Launches are taken in GPU start order (issue order for untimed ones);
// later_* means are NULL for a kernel launched once, and the time means
// leave out launches whose GPU activity record was lost.
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "analyzer/trace/operations.h"
#include "apptracer/enums.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/trace/short_names.h"
#include "analyzer/stats/sums.h"

namespace apptracer {

namespace {

struct LaunchUm {
  int64_t bytes_in = 0;
  int64_t fault_groups = 0;
};

struct Launch {
  int64_t order_ns;
  int64_t id;
  std::optional<int64_t> duration;
  LaunchUm um;
};

// What was attributed to each kernel launch, by kernels.id.
std::unordered_map<int64_t, LaunchUm> per_launch(const trace::UmTrace& um) {
  std::unordered_map<int64_t, LaunchUm> launches;
  for (size_t i = 0; i < um.events.size(); ++i) {
    if (um.causes[i].kind != trace::UmCauseKind::Kernel) continue;
    const trace::UmEvent& event = um.events[i];
    LaunchUm& launch = launches[um.causes[i].row];
    if (event.kind == UmCounterKind::BytesHtoD || event.kind == UmCounterKind::BytesDtoD)
      launch.bytes_in = saturating_add(launch.bytes_in, event.bytes);
    if (event.kind == UmCounterKind::GpuPageFault) ++launch.fault_groups;
  }
  return launches;
}

std::unordered_set<int64_t> names_using_managed_memory(trace::Trace& trace) {
  std::unordered_set<int64_t> names;
  for_each_managed_argument(trace, [&](const trace::Kernel& kernel, int64_t) {
    names.insert(trace::kernel_name_id(*kernel.row));
  });
  return names;
}

Cell mean(int64_t total, int64_t count) {
  return count > 0 ? Cell(static_cast<double>(total) / static_cast<double>(count)) : Cell();
}

}  // namespace

Table um_kernels_report(trace::Trace& trace, const trace::UmTrace& um) {
  std::unordered_map<int64_t, LaunchUm> attributed = per_launch(um);
  std::unordered_set<int64_t> managed_users = names_using_managed_memory(trace);
  std::map<int64_t, std::vector<Launch>> by_name_id;
  for (const trace::Kernel& view : trace.operations().kernels()) {
    const auto& kernel = *view.row;
    int64_t order_ns = kernel.gpu_start_ns.value_or(kernel.api_start_ns.value_or(0));
    Launch launch{order_ns, kernel.id, recorded_ns(kernel.gpu_start_ns, kernel.gpu_end_ns), {}};
    auto found = attributed.find(launch.id);
    if (found != attributed.end()) launch.um = found->second;
    by_name_id[trace::kernel_name_id(kernel)].push_back(launch);
  }

  std::map<std::string, std::vector<Launch>> by_name;
  for (auto& [name_id, launches] : by_name_id) {
    bool touched_um = managed_users.count(name_id) > 0 ||
                      std::any_of(launches.begin(), launches.end(),
                                  [&](const Launch& l) { return attributed.count(l.id) > 0; });
    if (!touched_um) continue;
    std::vector<Launch>& group = by_name[std::string(trace.string(name_id, "?"))];
    group.insert(group.end(), launches.begin(), launches.end());
  }

  struct Row {
    int64_t bytes_in;
    std::vector<Cell> cells;
  };
  std::vector<Row> summaries;
  for (auto& [kernel, launches] : by_name) {
    std::sort(launches.begin(), launches.end(), [](const Launch& a, const Launch& b) {
      return std::tie(a.order_ns, a.id) < std::tie(b.order_ns, b.id);
    });
    const Launch& first = launches.front();
    int64_t bytes_in = first.um.bytes_in, later_bytes = 0, later_faults = 0;
    int64_t later_time = 0, later_timed = 0;
    for (size_t i = 1; i < launches.size(); ++i) {
      bytes_in = saturating_add(bytes_in, launches[i].um.bytes_in);
      later_bytes = saturating_add(later_bytes, launches[i].um.bytes_in);
      later_faults += launches[i].um.fault_groups;
      if (launches[i].duration) {
        later_time = saturating_add(later_time, *launches[i].duration);
        ++later_timed;
      }
    }
    auto later = static_cast<int64_t>(launches.size() - 1);
    summaries.push_back(
        {bytes_in,
         {kernel, static_cast<int64_t>(launches.size()), bytes_in,
          optional_cell(first.duration), mean(later_time, later_timed),
          first.um.bytes_in, mean(later_bytes, later), first.um.fault_groups,
          mean(later_faults, later)}});
  }
  // Most migrated first; names break ties (by_name is in name order).
  std::stable_sort(summaries.begin(), summaries.end(),
                   [](const Row& a, const Row& b) { return a.bytes_in > b.bytes_in; });
  Table table{"um_kernels",
              {"name", "launches", "bytes_in", "first_ns", "later_mean_ns", "first_bytes_in",
               "later_mean_bytes_in", "first_fault_groups", "later_mean_fault_groups"},
              {}};
  set_text_form(table, "name", trace::short_kernel_name_cell);
  for (Row& row : summaries) table.rows.push_back(std::move(row.cells));
  return table;
}

}  // namespace apptracer
