#include "analyzer/record/exact_join.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "apptracer/row_inserter.h"
#include "apptracer/row_reader.h"
#include "apptracer/schema.h"
#include "analyzer/trace/trace.h"

namespace apptracer {

namespace {

struct NormalKernel {
  int64_t id;
  std::optional<int64_t> correlation_id;
  std::optional<int64_t> name_id;
  std::optional<int64_t> api_start_ns;
  std::string name;       // mangled
  std::string demangled;
};

// In launch order: by correlation id, then GPU start (unknown ones last).
std::vector<NormalKernel> normal_kernels(trace::Trace& trace) {
  std::vector<const trace::Packed<KernelRow>*> launched;
  for (const trace::Packed<KernelRow>& kernel : trace.rows<KernelRow>()) launched.push_back(&kernel);
  auto order = [](const trace::Packed<KernelRow>* k) {
    return std::make_tuple(!k->call_correlation_id, k->call_correlation_id.value_or(0),
                           !k->gpu_start_ns, k->gpu_start_ns.value_or(0), k->id);
  };
  std::sort(launched.begin(), launched.end(),
            [&](const auto* a, const auto* b) { return order(a) < order(b); });
  std::vector<NormalKernel> out;
  for (const trace::Packed<KernelRow>* k : launched) {
    out.push_back({k->id, k->call_correlation_id.optional(), k->name_id.optional(),
                   k->api_start_ns.optional(), std::string(trace.string(k->name_id)),
                   std::string(trace.string(k->demangled_id))});
  }
  return out;
}

struct Allocation {
  int64_t id;
  int64_t address;
};

// Allocations by (memory kind, bytes), each list in allocation order.
using AllocationsAlike = std::map<std::pair<MemoryKind, int64_t>, std::vector<Allocation>>;

AllocationsAlike allocations_alike(trace::Trace& trace) {
  std::vector<const trace::Packed<AllocationRow>*> in_order;
  for (const auto& allocation : trace.rows<AllocationRow>()) in_order.push_back(&allocation);
  std::stable_sort(in_order.begin(), in_order.end(),
                   [](const auto* a, const auto* b) { return a->alloc_ns < b->alloc_ns; });
  AllocationsAlike out;
  for (const trace::Packed<AllocationRow>* allocation : in_order) {
    out[{memory_kind_of(allocation->kind), allocation->bytes}].push_back(
        {allocation->id, allocation->address});
  }
  return out;
}

// Sanitizer-run allocation id -> the normal run's allocation of the same
// kind and size at the same position among those alike.
std::unordered_map<int64_t, Allocation> match_allocations(trace::Trace& normal,
                                                          trace::Trace& sanitizer) {
  AllocationsAlike theirs = allocations_alike(sanitizer);
  AllocationsAlike ours = allocations_alike(normal);
  std::unordered_map<int64_t, Allocation> matched;
  for (const auto& [key, list] : theirs) {
    auto same = ours.find(key);
    if (same == ours.end()) continue;
    for (size_t i = 0; i < list.size() && i < same->second.size(); ++i) {
      matched.emplace(list[i].id, same->second[i]);
    }
  }
  return matched;
}

std::string in_quotes(const std::string& name) { return "'" + name + "'"; }

}  // namespace

ExactJoinSummary join_exact_runs(Database& normal, Database& sanitizer) {
  if (!sanitizer.has_table("exact_launches")) {
    throw ExactJoinError("the sanitizer run recorded no --exact data");
  }
  trace::Trace ours(normal);
  trace::Trace theirs(sanitizer);
  if (ours.row_count("exact_launches") > 0) {
    throw ExactJoinError("the normal run's trace already has --exact data");
  }
  std::vector<NormalKernel> kernels = normal_kernels(ours);
  const trace::Rows<ExactLaunchRow>& launches = theirs.rows<ExactLaunchRow>();
  for (size_t i = 0; i < std::min(kernels.size(), launches.size()); ++i) {
    std::string name(theirs.string(launches[i].name_id));
    if (name != kernels[i].name && name != kernels[i].demangled) {
      throw ExactJoinError("the two runs diverge at kernel launch " + std::to_string(i + 1) +
                           ": the normal run launched " + in_quotes(kernels[i].name) +
                           ", the sanitizer run " + in_quotes(name) +
                           "; the program must launch the same kernels in the same order each "
                           "run (or use one run: --exact-path one-run)");
    }
  }
  if (kernels.size() != launches.size()) {
    throw ExactJoinError("the two runs diverge: the normal run launched " +
                         std::to_string(kernels.size()) + " kernels, the sanitizer run " +
                         std::to_string(launches.size()) +
                         "; the program must launch the same kernels in the same order each run");
  }
  std::unordered_map<int64_t, Allocation> matched = match_allocations(ours, theirs);
  std::unordered_map<int64_t, int64_t> their_address;
  for (const auto& allocation : theirs.rows<AllocationRow>()) {
    their_address[allocation.id] = allocation.address;
  }

  ExactJoinSummary summary;
  with_transaction(normal, [&] {
    RowInserter<ExactLaunchRow> insert_launch(normal);
    BatchInserter<ExactAccessRow> insert_access(normal);
    std::unordered_map<int64_t, int64_t> launch_ids;  // theirs -> ours (the same numbers)
    for (size_t i = 0; i < launches.size(); ++i) {
      const trace::Packed<ExactLaunchRow>& l = launches[i];
      ExactLaunchRow row;
      row.id = l.id;
      row.call_correlation_id = kernels[i].correlation_id;
      row.kernel_id = kernels[i].id;
      row.name_id = kernels[i].name_id;
      row.device = l.device;
      row.graph_position = l.graph_position;
      row.api_start_ns = kernels[i].api_start_ns;
      row.pages = l.pages;
      row.approximate = l.approximate;
      row.incomplete = l.incomplete;
      insert_launch.insert(row);
    }
    // Launch ids are the same numbers in both traces; allocations and
    // addresses move to the normal run's.
    for_each_row<ExactAccessRow>(sanitizer, "ORDER BY launch_id, lo", [&](ExactAccessRow row) {
      std::optional<int64_t> theirs = row.alloc_id;
      auto match = theirs ? matched.find(*theirs) : matched.end();
      if (match != matched.end()) {
        int64_t shift = match->second.address - their_address[*theirs];
        row.alloc_id = match->second.id;
        row.lo += shift;
        row.hi += shift;
      } else {
        row.alloc_id = row.alloc_offset = std::nullopt;
        ++summary.unmatched_ranges;
      }
      insert_access.add(row);
      ++summary.ranges;
    });
    insert_access.flush();
    // The normal run's meta gains what the sanitizer run said of --exact.
    RowInserter<MetaRow> upsert(normal, OnConflict::Replace);
    auto set = [&](std::string_view key, std::string_view value) {
      upsert.insert({std::string(key), std::string(value)});
    };
    for (const trace::Packed<MetaRow>& meta : theirs.rows<MetaRow>()) {
      std::string_view key = theirs.text(meta.key);
      if (key.substr(0, 6) == "exact.") set(key, theirs.text(meta.value));
    }
    set("exact", "on");
    set("exact_path", "two runs");
    set("exact.unmatched_ranges", std::to_string(summary.unmatched_ranges));
    set("exact.unlinked_launches", "0");
  });
  summary.launches = static_cast<int64_t>(launches.size());
  return summary;
}

std::vector<std::pair<std::string, std::string>> pair_run_traces(
    const std::vector<std::string>& normal, const std::vector<std::string>& sanitizer) {
  // Each run's traces of processes that launched kernels, by command line, in
  // the order the processes started.
  auto by_command = [](const std::vector<std::string>& paths, const char* launches) {
    std::map<std::string, std::vector<std::pair<int64_t, std::string>>> out;
    for (const std::string& path : paths) {
      trace::Trace trace(path, TraceAccess::ReadOnly);
      if (trace.row_count(launches) == 0) continue;
      out[trace_meta(trace.db(), "command_line")].emplace_back(
          std::stoll(trace_meta(trace.db(), "start_time_utc_ns", "0")), path);
    }
    for (auto& [command, list] : out) std::sort(list.begin(), list.end());
    return out;
  };
  auto ours = by_command(normal, "kernels");
  auto theirs = by_command(sanitizer, "exact_launches");
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& [command, list] : ours) {
    auto other = theirs.find(command);
    size_t count = other == theirs.end() ? 0 : other->second.size();
    if (count != list.size()) {
      throw ExactJoinError("the two runs started different processes: " +
                           std::to_string(list.size()) + " running '" + command +
                           "' in the normal run, " + std::to_string(count) +
                           " in the sanitizer run");
    }
    for (size_t i = 0; i < list.size(); ++i) {
      pairs.emplace_back(list[i].second, other->second[i].second);
    }
  }
  size_t theirs_launching = 0;
  for (const auto& [command, list] : theirs) theirs_launching += list.size();
  if (pairs.size() != theirs_launching) {
    throw ExactJoinError("the two runs started different processes: " +
                         std::to_string(theirs_launching) + " launched kernels in the sanitizer "
                         "run, " + std::to_string(pairs.size()) + " in the normal run");
  }
  return pairs;
}

}  // namespace apptracer
