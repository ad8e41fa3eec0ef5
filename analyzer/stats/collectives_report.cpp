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
#include "analyzer/stats/duration_summary.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/stats/sums.h"

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

// A call's time (the header's `time`); none when it has none.
std::optional<int64_t> call_ns(const trace::Packed<CollectiveRow>& call, CommLibrary library) {
  if (call.gpu_start_ns) return recorded_ns(call.gpu_start_ns, call.gpu_end_ns);
  if (library != CommLibrary::Mpi) return std::nullopt;
  return saturating_sub(call.complete_ns.value_or(call.api_end_ns), call.api_start_ns);
}

}  // namespace

Table collectives_report(trace::Trace& trace) {
  Table table{"collectives",
              {"library", "kind", "nranks", "bytes", "algorithm", "count"},
              {}};
  table.columns.insert(table.columns.end(), std::begin(kDurationColumns), std::end(kDurationColumns));
  table.columns.insert(table.columns.end(), {"algbw_gbps", "busbw_gbps"});
  using Key = std::tuple<CommLibrary, CollectiveKind, int64_t, int64_t, std::string>;
  std::map<Key, std::vector<int64_t>> groups;
  std::map<Key, int64_t> counts;
  for (const trace::Packed<CollectiveRow>& call : trace.rows<CollectiveRow>()) {
    const trace::Packed<CommunicatorRow>* communicator =
        trace.find<CommunicatorRow>(call.communicator_id);
    if (!communicator) continue;
    int64_t nranks = communicator->nranks;
    std::string algorithm;
    if (call.algorithm) {
      algorithm = std::string(to_string(*call.algorithm)) + "/" +
                  std::string(to_string(call.protocol.value_or(CollProtocol{})));
    }
    Key key{communicator->library, call.kind, nranks,
            nccl_tests_bytes(call.kind, call.count, call.element_bytes, nranks), algorithm};
    ++counts[key];
    std::vector<int64_t>& durations = groups[key];
    if (auto duration = call_ns(call, communicator->library)) durations.push_back(*duration);
  }
  for (const auto& [key, durations] : groups) {
    const auto& [library, kind, nranks, bytes, algorithm] = key;
    DurationSummary timed = summarize_durations(durations);
    std::vector<Cell> row{std::string(to_string(library)), std::string(to_string(kind)), nranks, bytes,
                          algorithm, counts.at(key)};
    append_duration_cells(row, timed);
    if (timed.count > 0 && timed.total > 0 && bytes > 0) {
      // bytes per ns = GB/s.
      double algbw = static_cast<double>(bytes) * static_cast<double>(timed.count) /
                     static_cast<double>(timed.total);
      row.emplace_back(algbw);
      row.emplace_back(algbw * nccl_tests_bus_factor(kind, nranks));
    } else {
      row.emplace_back(Cell{});
      row.emplace_back(Cell{});
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
