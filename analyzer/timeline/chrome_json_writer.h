// Writes a timeline in the Chrome trace event JSON format as the PyTorch
// profiler (Kineto) writes it, so the tools that read its traces read ours:
// Holistic Trace Analysis, TensorBoard's profiler plugin, chrome://tracing,
// Perfetto's JSON importer.
//
// Kineto's layout: host calls on (OS pid, OS tid); GPU work on (device
// ordinal, stream id), whose process is named "GPU N"; NVTX ranges
// ("user_annotation") on their thread and ("gpu_user_annotation") on the
// streams of their work; "ac2g" flows from a call to the GPU work it issued;
// memory counters as counter ("C") events of their process. Top level:
// "deviceProperties", "distributedInfo" for a rank of a job, "traceEvents",
// "displayTimeUnit".
//
// JSON numbers are doubles, which cannot hold CUPTI timestamps to the
// nanosecond, so times are microseconds since the first event, to the
// nanosecond as decimals (as Kineto writes them); the first event's time is
// in "otherData": {"origin_ns": ...}. Holistic Trace Analysis rounds such
// times itself, each start up and each end down to a whole microsecond,
// which loses up to 2 us per event and makes shorter ones negative; for it
// the writer can round instead (ChromeJsonTimes::WholeMicroseconds). GPU work whose
// device or stream the trace does not know gets ids from kSyntheticTidBase
// up, far above any device ordinal, stream id or Linux thread id.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analyzer/timeline/timeline.h"

namespace apptracer {

inline constexpr int64_t kSyntheticTidBase = 1'000'000'000;

// How times are written. WholeMicroseconds: integers, each start and end
// rounded to the nearest microsecond since the first event (so gaps and
// overlaps keep their order and sums stay within half a microsecond per
// event of the exact ones), an operation that then has no length keeping
// one microsecond (a tool that divides by it still counts it).
enum class ChromeJsonTimes { Nanoseconds, WholeMicroseconds };

// Events are written as they come; the tracks announced before the first
// slice or counter value wait for it (it gives the origin).
class ChromeJsonWriter : public TimelineSink {
 public:
  explicit ChromeJsonWriter(std::ostream& out, ChromeJsonTimes times = ChromeJsonTimes::Nanoseconds)
      : out_(out), times_(times) {}
  void source(const TimelineSource& source) override { source_ = source; }
  void track(const TimelineTrack& track) override;
  void slice(const TimelineSlice& slice) override;
  void counter(const TimelineCounter& counter) override;
  void finish() override;

 private:
  struct Thread {
    int64_t pid = 0;
    int64_t tid = 0;
  };

  void start(int64_t origin_ns);
  void write_track(size_t index);
  void emit(const nlohmann::json& event);
  Thread thread_of(size_t track_index) const;
  nlohmann::json relative_us(int64_t ns) const;
  nlohmann::json duration_us(int64_t start_ns, int64_t end_ns) const;

  std::ostream& out_;
  ChromeJsonTimes times_;
  TimelineSource source_;
  std::vector<TimelineTrack> tracks_;
  std::vector<int64_t> gpu_processes_;  // device pids already named
  bool started_ = false;
  bool first_event_ = true;
  int64_t origin_ns_ = 0;
};

void write_chrome_json(std::ostream& out, const Timeline& timeline);

}  // namespace apptracer
