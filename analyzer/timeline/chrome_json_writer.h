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
// nanosecond, so times are microseconds since the first event; the absolute
// first timestamp is in "otherData": {"origin_ns": ...}. GPU work whose
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

// Events are written as they come; the tracks announced before the first
// slice or counter value wait for it (it gives the origin).
class ChromeJsonWriter : public TimelineSink {
 public:
  explicit ChromeJsonWriter(std::ostream& out) : out_(out) {}
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
  double relative_us(int64_t ns) const;

  std::ostream& out_;
  TimelineSource source_;
  std::vector<TimelineTrack> tracks_;
  std::vector<int64_t> gpu_processes_;  // device pids already named
  bool started_ = false;
  bool first_event_ = true;
  int64_t origin_ns_ = 0;
};

void write_chrome_json(std::ostream& out, const Timeline& timeline);

}  // namespace apptracer
