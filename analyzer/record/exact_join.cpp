#include "analyzer/record/exact_join.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "apptracer/row_inserter.h"
#include "apptracer/row_reader.h"
#include "apptracer/schema.h"
#include "analyzer/trace/trace_file.h"

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

std::vector<NormalKernel> normal_kernels(Database& db) {
  std::vector<NormalKernel> out;
  Statement rows = db.prepare(
      "SELECT k.id, k.call_correlation_id, k.name_id, k.api_start_ns, coalesce(m.text, ''), "
      "coalesce(d.text, '') FROM kernels k LEFT JOIN strings m ON m.id = k.name_id "
      "LEFT JOIN strings d ON d.id = k.demangled_id "
      "ORDER BY k.call_correlation_id IS NULL, k.call_correlation_id, k.gpu_start_ns IS NULL, "
      "k.gpu_start_ns, k.id");
  while (rows.step()) {
    out.push_back({rows.int64(0), rows.optional_int64(1), rows.optional_int64(2),
                   rows.optional_int64(3), rows.text(4), rows.text(5)});
  }
  return out;
}

struct Allocation {
  int64_t id;
  int64_t address;
};

// Allocations by (memory kind, bytes), each list in allocation order.
using AllocationsAlike = std::map<std::pair<int64_t, int64_t>, std::vector<Allocation>>;

AllocationsAlike allocations_alike(Database& db) {
  AllocationsAlike out;
  Statement rows =
      db.prepare("SELECT id, kind, address, bytes FROM allocations ORDER BY alloc_ns, id");
  while (rows.step()) {
    auto memory = static_cast<int64_t>(memory_kind_of(static_cast<AllocKind>(rows.int64(1))));
    out[{memory, rows.int64(3)}].push_back({rows.int64(0), rows.int64(2)});
  }
  return out;
}

// Sanitizer-run allocation id -> the normal run's allocation of the same
// kind and size at the same position among those alike.
std::unordered_map<int64_t, Allocation> match_allocations(Database& normal, Database& sanitizer) {
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

std::string quoted(const std::string& name) { return "'" + name + "'"; }

}  // namespace

ExactJoinSummary join_exact_runs(Database& normal, Database& sanitizer) {
  if (!sanitizer.has_table("exact_launches")) {
    throw ExactJoinError("the sanitizer run recorded no --exact data");
  }
  Statement existing = normal.prepare("SELECT count(*) FROM exact_launches");
  if (existing.step() && existing.int64(0) > 0) {
    throw ExactJoinError("the normal run's trace already has --exact data");
  }
  std::vector<NormalKernel> kernels = normal_kernels(normal);
  struct Launch {
    int64_t id;
    std::string name;
    std::optional<int64_t> device, graph_position;
    int64_t pages, approximate, incomplete;
  };
  std::vector<Launch> launches;
  Statement rows = sanitizer.prepare(
      "SELECT l.id, coalesce(s.text, ''), l.device, l.graph_position, l.pages, l.approximate, "
      "l.incomplete FROM exact_launches l LEFT JOIN strings s ON s.id = l.name_id ORDER BY l.id");
  while (rows.step()) {
    launches.push_back({rows.int64(0), rows.text(1), rows.optional_int64(2),
                        rows.optional_int64(3), rows.int64(4), rows.int64(5), rows.int64(6)});
  }
  for (size_t i = 0; i < std::min(kernels.size(), launches.size()); ++i) {
    const std::string& name = launches[i].name;
    if (name != kernels[i].name && name != kernels[i].demangled) {
      throw ExactJoinError("the two runs diverge at kernel launch " + std::to_string(i + 1) +
                           ": the normal run launched " + quoted(kernels[i].name) +
                           ", the sanitizer run " + quoted(name) +
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
  std::unordered_map<int64_t, Allocation> matched = match_allocations(normal, sanitizer);
  std::unordered_map<int64_t, int64_t> their_address;
  Statement addresses = sanitizer.prepare("SELECT id, address FROM allocations");
  while (addresses.step()) their_address[addresses.int64(0)] = addresses.int64(1);

  ExactJoinSummary summary;
  with_transaction(normal, [&] {
    RowInserter<ExactLaunchRow> insert_launch(normal);
    BatchInserter<ExactAccessRow> insert_access(normal);
    std::unordered_map<int64_t, int64_t> launch_ids;  // theirs -> ours (the same numbers)
    for (size_t i = 0; i < launches.size(); ++i) {
      const Launch& l = launches[i];
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
      row.incomplete = static_cast<ExactGap>(l.incomplete);
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
    Statement meta = sanitizer.prepare("SELECT key, value FROM meta WHERE key LIKE 'exact.%'");
    Statement upsert = normal.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
    auto set = [&](const std::string& key, const std::string& value) {
      upsert.bind(1, key).bind(2, value).run();
    };
    while (meta.step()) set(meta.text(0), meta.text(1));
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
      Database db = open_trace(path, TraceAccess::ReadOnly);
      Statement launched = db.prepare(std::string("SELECT EXISTS (SELECT 1 FROM ") + launches + ")");
      if (!launched.step() || launched.int64(0) == 0) continue;
      out[trace_meta(db, "command_line")].emplace_back(
          std::stoll(trace_meta(db, "start_time_utc_ns", "0")), path);
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
