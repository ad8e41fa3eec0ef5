// Writes a timeline in Perfetto's protobuf trace format (proto/perfetto_trace.proto),
// which ui.perfetto.dev opens directly.
#pragma once

#include <cstdint>
#include <ostream>
#include <queue>
#include <tuple>
#include <vector>

#include "analyzer/timeline/timeline.h"

namespace apptracer {

// Slices on one track must nest; GPU records that overlap on one stream
// (clock skew) are clipped to the enclosing slice so the file stays valid.
// Packets are written as slices come, in time order; only the slices still
// open are held.
class PerfettoWriter : public TimelineSink {
 public:
  explicit PerfettoWriter(std::ostream& out) : out_(out) {}
  void source(const TimelineSource&) override {}
  void track(const TimelineTrack& track) override;
  void slice(const TimelineSlice& slice) override;
  void counter(const TimelineCounter& counter) override;
  void finish() override;

 private:
  // Writes the end of every open slice that ends at or before `ns`.
  void end_slices_until(int64_t ns);

  std::ostream& out_;
  bool first_packet_ = true;
  std::vector<uint64_t> uuids_;                // by track index
  std::vector<std::vector<int64_t>> open_;     // by track index: ends of the open slices
  // Pending ends: (end, track, -depth), the earliest first and, at one time,
  // the innermost first.
  using End = std::tuple<int64_t, size_t, int64_t>;
  std::priority_queue<End, std::vector<End>, std::greater<End>> ends_;
};

void write_perfetto_trace(std::ostream& out, const Timeline& timeline);

}  // namespace apptracer
