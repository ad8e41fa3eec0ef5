// Per GPU stream: the operations it ran and how long it was busy. Busy time is
// the length of the union of the operations' GPU intervals (so overlapping
// records are not counted twice); span is first start to last end, and
// busy_pct = busy / span. Operations without GPU times are counted but add no
// time.
#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "analyzer/stats/stats_reports.h"
#include "analyzer/stats/sums.h"

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

Table streams_report(trace::Trace& trace) {
  using StreamKey = std::pair<std::optional<int64_t>, std::optional<int64_t>>;
  std::map<StreamKey, StreamWork> streams;
  // Counts the operation as `counted` of its stream's work.
  auto add = [&](int64_t StreamWork::*counted, trace::NullableInt device, const auto& row) {
    StreamWork& work = streams[{device.optional(), row.stream.optional()}];
    ++(work.*counted);
    if (row.gpu_start_ns && row.gpu_end_ns) work.intervals.emplace_back(*row.gpu_start_ns, *row.gpu_end_ns);
  };
  for (const trace::Kernel& launch : trace.operations().kernels()) {
    const auto& kernel = *launch.row;
    add(&StreamWork::kernels, kernel.device, kernel);
  }
  for (const trace::Transfer& transfer : trace.operations().copies()) {
    const auto& copy = *transfer.copy_row();
    add(&StreamWork::copies, copy.dst_device ? copy.dst_device : copy.src_device, copy);
  }
  for (const trace::Transfer& transfer : trace.operations().memsets()) {
    const auto& memset = *transfer.memset_row();
    add(&StreamWork::memsets, memset.device, memset);
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
