// Per GPU stream: the operations it ran and how long it was busy. Busy time is
// the length of the union of the operations' GPU intervals (so overlapping
// records are not counted twice); span is first start to last end, and
// busy_pct = busy / span. Operations without GPU times are counted but add no
// time.
#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "stats_reports.h"
#include "sums.h"

namespace apptracer {

namespace {

struct StreamWork {
  int64_t kernels = 0;
  int64_t copies = 0;
  int64_t memsets = 0;
  std::vector<std::pair<int64_t, int64_t>> intervals;
};

int64_t union_length(std::vector<std::pair<int64_t, int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  __int128 total = 0;
  int64_t covered_until = INT64_MIN;
  for (auto [start, end] : intervals) {
    start = std::max(start, covered_until);
    if (end > start) {
      total += static_cast<__int128>(end) - start;
      covered_until = end;
    }
  }
  return clamp_to_int64(total);
}

}  // namespace

Table streams_report(Database& db) {
  using StreamKey = std::pair<std::optional<int64_t>, std::optional<int64_t>>;
  std::map<StreamKey, StreamWork> streams;
  Statement rows = db.prepare(
      "SELECT 0, device, stream, gpu_start_ns, gpu_end_ns FROM kernels UNION ALL "
      "SELECT 1, COALESCE(dst_device, src_device), stream, gpu_start_ns, gpu_end_ns FROM memcpys "
      "UNION ALL SELECT 2, device, stream, gpu_start_ns, gpu_end_ns FROM memsets");
  while (rows.step()) {
    StreamWork& work = streams[{rows.optional_int64(1), rows.optional_int64(2)}];
    int64_t operation = rows.int64(0);
    ++(operation == 0 ? work.kernels : operation == 1 ? work.copies : work.memsets);
    if (!rows.is_null(3) && !rows.is_null(4)) work.intervals.emplace_back(rows.int64(3), rows.int64(4));
  }
  Table table{"streams",
              {"device", "stream", "kernels", "copies", "memsets", "busy_ns", "span_ns", "busy_pct"},
              {}};
  for (const auto& [key, work] : streams) {
    std::vector<Cell> row;
    for (std::optional<int64_t> id : {key.first, key.second}) {
      if (id) {
        row.emplace_back(*id);
      } else {
        row.emplace_back(std::monostate{});
      }
    }
    row.insert(row.end(), {work.kernels, work.copies, work.memsets});
    int64_t busy = union_length(work.intervals);
    row.emplace_back(busy);
    if (work.intervals.empty()) {
      row.resize(row.size() + 2);
    } else {
      int64_t first = INT64_MAX;
      int64_t last = INT64_MIN;
      for (const auto& [start, end] : work.intervals) {
        first = std::min(first, start);
        last = std::max(last, end);
      }
      int64_t span = saturating_sub(last, first);
      row.emplace_back(span);
      if (span > 0) {
        row.emplace_back(100.0 * static_cast<double>(busy) / static_cast<double>(span));
      } else {
        row.emplace_back(std::monostate{});
      }
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace apptracer
