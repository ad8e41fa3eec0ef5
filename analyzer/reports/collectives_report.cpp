// Collectives and point-to-point operations (NCCL, MPI) grouped by library,
// kind, ranks, size and what NCCL chose (algorithm/protocol), with the
// bandwidths nccl-tests reports (its doc/PERFORMANCE.md):
//   size   S: the bytes nccl-tests counts for one operation (below);
//   time   per operation and rank: GPU time when recorded (NCCL's kernel),
//          else the host call (MPI; for MPI_I* operations up to completion);
//   algbw  S / mean time; busbw = algbw x the kind's factor, which makes
//          numbers comparable with the hardware's link bandwidth.
// Times of one operation on several ranks count once per rank (a merged
// trace), as nccl-tests averages over ranks.
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "apptracer/enums.h"
#include "duration_summary.h"
#include "stats_reports.h"

namespace apptracer {

namespace {

// S for one operation: `count` is as the caller passed it (tables.def).
int64_t nccl_tests_bytes(CollectiveKind kind, int64_t count, int64_t element_bytes, int64_t nranks) {
  int64_t one = count * element_bytes;
  switch (kind) {
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllToAll:
    case CollectiveKind::Gather:
    case CollectiveKind::Scatter: return one * nranks;
    case CollectiveKind::Barrier: return 0;
    default: return one;
  }
}

double nccl_tests_bus_factor(CollectiveKind kind, int64_t nranks) {
  if (nranks <= 0) return 1;
  double n = static_cast<double>(nranks);
  switch (kind) {
    case CollectiveKind::AllReduce: return 2 * (n - 1) / n;
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllToAll:
    case CollectiveKind::Gather:
    case CollectiveKind::Scatter: return (n - 1) / n;
    default: return 1;
  }
}

}  // namespace

Table collectives_report(Database& db) {
  Table table{"collectives",
              {"library", "kind", "nranks", "bytes", "algorithm", "count"},
              {}};
  table.columns.insert(table.columns.end(), std::begin(kDurationColumns), std::end(kDurationColumns));
  table.columns.insert(table.columns.end(), {"algbw_gbps", "busbw_gbps"});
  if (!db.has_table("collectives")) return table;
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, std::string>;
  std::map<Key, std::vector<int64_t>> groups;
  std::map<Key, int64_t> counts;
  Statement rows = db.prepare(
      "SELECT m.library, c.kind, m.nranks, c.count, c.element_bytes, c.algorithm, c.protocol,"
      " CASE WHEN c.gpu_start_ns IS NOT NULL THEN c.gpu_end_ns - c.gpu_start_ns"
      "      WHEN m.library = ? THEN coalesce(c.complete_ns, c.api_end_ns) - c.api_start_ns END"
      " FROM collectives c JOIN communicators m ON m.id = c.communicator_id");
  rows.bind(1, static_cast<int64_t>(CommLibrary::Mpi));
  while (rows.step()) {
    auto kind = static_cast<CollectiveKind>(rows.int64(1));
    int64_t nranks = rows.int64(2);
    std::string algorithm;
    if (!rows.is_null(5)) {
      algorithm = std::string(to_string(static_cast<CollAlgorithm>(rows.int64(5)))) + "/" +
                  std::string(to_string(static_cast<CollProtocol>(rows.int64(6))));
    }
    Key key{rows.int64(0), rows.int64(1), nranks,
            nccl_tests_bytes(kind, rows.int64(3), rows.int64(4), nranks), algorithm};
    ++counts[key];
    std::vector<int64_t>& durations = groups[key];
    if (!rows.is_null(7)) durations.push_back(rows.int64(7));
  }
  for (const auto& [key, durations] : groups) {
    const auto& [library, kind, nranks, bytes, algorithm] = key;
    DurationSummary timed = summarize_durations(durations);
    std::vector<Cell> row{std::string(to_string(static_cast<CommLibrary>(library))),
                          std::string(to_string(static_cast<CollectiveKind>(kind))), nranks, bytes,
                          algorithm, counts.at(key)};
    append_duration_cells(row, timed);
    if (timed.count > 0 && timed.total > 0 && bytes > 0) {
      // bytes per ns = GB/s.
      double algbw = static_cast<double>(bytes) * static_cast<double>(timed.count) /
                     static_cast<double>(timed.total);
      row.emplace_back(algbw);
      row.emplace_back(algbw * nccl_tests_bus_factor(static_cast<CollectiveKind>(kind), nranks));
    } else {
      row.emplace_back(Cell{});
      row.emplace_back(Cell{});
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
