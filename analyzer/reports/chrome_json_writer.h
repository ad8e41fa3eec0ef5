// Writes a timeline in the Chrome trace event JSON format, for tools that want
// JSON (chrome://tracing, Perfetto's JSON importer, scripts).
//
// JSON numbers are doubles, which cannot hold CUPTI timestamps to the
// nanosecond, so times are microseconds since the first event; the absolute
// first timestamp is in "otherData": {"origin_ns": ...}. Tracks that are not
// OS threads (GPU streams, NVTX) get thread ids from kSyntheticTidBase up,
// far above any Linux thread id.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "timeline.h"

namespace apptracer {

inline constexpr int64_t kSyntheticTidBase = 1'000'000'000;

// Events are written as slices come; the tracks announced before the first
// slice wait for it (it gives the origin).
class ChromeJsonWriter : public TimelineSink {
 public:
  explicit ChromeJsonWriter(std::ostream& out) : out_(out) {}
  void track(const TimelineTrack& track) override;
  void slice(const TimelineSlice& slice) override;
  void finish() override;

 private:
  void start(int64_t origin_ns);
  void write_track(size_t index);
  void emit(const nlohmann::json& event);
  int64_t tid_of(size_t track_index) const;
  double relative_us(int64_t ns) const;

  std::ostream& out_;
  std::vector<TimelineTrack> tracks_;
  bool started_ = false;
  bool first_event_ = true;
  int64_t origin_ns_ = 0;
};

void write_chrome_json(std::ostream& out, const Timeline& timeline);

}  // namespace apptracer
