#include "exact/exact_records.h"

#include <algorithm>

namespace apptracer::exact {

namespace {

Record record_of(RecordType type, const LaunchFacts& launch) {
  Record r{};
  r.type = type;
  r.correlation_id = r.own_correlation_id = launch.correlation_id;
  return r;
}

}  // namespace

void emit_exact_launch(RecordBuffers& buffers, const LaunchFacts& launch,
                       const DecodedLaunch& decoded) {
  Record r = record_of(RecordType::ExactLaunch, launch);
  ExactLaunchRecord& l = r.exact_launch;
  l.launch_index = launch.launch_index;
  l.api_start_ns = launch.api_start_ns;
  l.name_id = launch.name_id;
  l.pages = decoded.pages;
  l.intervals = static_cast<uint32_t>(decoded.ranges.size());
  l.device = launch.device;
  l.graph_position = launch.graph_position;
  l.incomplete = launch.incomplete;
  l.approximate = decoded.approximate;
  buffers.append(r);
  const auto& ranges = decoded.ranges;
  for (size_t start = 0; start < ranges.size(); start += ExactIntervalsRecord::kIntervals) {
    Record chunk = record_of(RecordType::ExactIntervals, launch);
    ExactIntervalsRecord& c = chunk.exact_intervals;
    c.launch_index = launch.launch_index;
    size_t n = std::min<size_t>(ExactIntervalsRecord::kIntervals, ranges.size() - start);
    for (size_t i = 0; i < n; ++i) {
      const ExactRange& range = ranges[start + i];
      c.lo[i] = range.lo;
      c.hi[i] = range.hi;
      c.access[i] = range.access;
      if (range.approximate) c.approximate_mask |= 1u << i;
    }
    c.count = static_cast<uint8_t>(n);
    buffers.append(chunk);
  }
}

}  // namespace apptracer::exact
