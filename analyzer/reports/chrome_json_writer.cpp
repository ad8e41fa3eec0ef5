#include "chrome_json_writer.h"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

namespace apptracer {

namespace {

// Times relative to the first event stay far below 2^53 ns, so a double
// holds them to the nanosecond.
double microseconds(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

class ChromeJsonWriter {
 public:
  ChromeJsonWriter(std::ostream& out, const Timeline& timeline, Progress* progress)
      : out_(out), timeline_(timeline), progress_(progress) {
    origin_ns_ = INT64_MAX;
    for (const TimelineSlice& slice : timeline.slices) origin_ns_ = std::min(origin_ns_, slice.start_ns);
    if (timeline.slices.empty()) origin_ns_ = 0;
  }

  void write() {
    out_ << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"origin_ns\":" << origin_ns_
         << "},\"traceEvents\":[\n";
    for (size_t i = 0; i < timeline_.tracks.size(); ++i) write_track(i);
    int64_t written = 0;
    for (const TimelineSlice& slice : timeline_.slices) {
      write_slice(slice);
      if (progress_ && ++written % 65536 == 0) {
        progress_->update("writing slices", written, static_cast<int64_t>(timeline_.slices.size()));
      }
    }
    out_ << "\n]}\n";
  }

 private:
  int64_t tid_of(size_t track_index) const {
    const TimelineTrack& track = timeline_.tracks[track_index];
    if (track.kind == TimelineTrack::Kind::Thread) return track.tid;
    return kSyntheticTidBase + static_cast<int64_t>(track_index);
  }

  void emit(const nlohmann::json& event) {
    out_ << (first_ ? "" : ",\n")
         << event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    first_ = false;
  }

  void write_track(size_t index) {
    const TimelineTrack& track = timeline_.tracks[index];
    if (track.kind == TimelineTrack::Kind::Process) {
      emit({{"ph", "M"}, {"name", "process_name"}, {"pid", track.pid}, {"tid", 0},
            {"args", {{"name", track.name}}}});
      return;
    }
    emit({{"ph", "M"}, {"name", "thread_name"}, {"pid", track.pid}, {"tid", tid_of(index)},
          {"args", {{"name", track.name}}}});
  }

  double relative_us(int64_t ns) const { return microseconds(ns - origin_ns_); }

  void write_slice(const TimelineSlice& slice) {
    const TimelineTrack& track = timeline_.tracks[slice.track];
    nlohmann::json args = nlohmann::json::object();
    for (const TimelineArg& arg : slice.args) {
      if (std::holds_alternative<int64_t>(arg.value)) {
        args[std::string(arg.name)] = std::get<int64_t>(arg.value);
      } else if (std::holds_alternative<double>(arg.value)) {
        args[std::string(arg.name)] = std::get<double>(arg.value);
      } else if (std::holds_alternative<std::string>(arg.value)) {
        args[std::string(arg.name)] = std::get<std::string>(arg.value);
      }
    }
    int64_t tid = tid_of(slice.track);
    emit({{"ph", "X"}, {"name", timeline_.name_of(slice)}, {"cat", std::string(slice.category)}, {"pid", track.pid},
          {"tid", tid}, {"ts", relative_us(slice.start_ns)},
          {"dur", microseconds(slice.end_ns - slice.start_ns)}, {"args", std::move(args)}});
    // Flow events bind to the slice enclosing their timestamp on their thread.
    for (uint64_t flow : slice.flows_out) {
      emit({{"ph", "s"}, {"name", "flow"}, {"cat", "flow"}, {"id", flow}, {"pid", track.pid},
            {"tid", tid}, {"ts", relative_us(slice.start_ns)}});
    }
    for (uint64_t flow : slice.flows_in) {
      emit({{"ph", "f"}, {"bp", "e"}, {"name", "flow"}, {"cat", "flow"}, {"id", flow},
            {"pid", track.pid}, {"tid", tid}, {"ts", relative_us(slice.start_ns)}});
    }
  }

  std::ostream& out_;
  const Timeline& timeline_;
  Progress* progress_;
  int64_t origin_ns_ = 0;
  bool first_ = true;
};

}  // namespace

void write_chrome_json(std::ostream& out, const Timeline& timeline, Progress* progress) {
  ChromeJsonWriter(out, timeline, progress).write();
}

}  // namespace apptracer
