#include "chrome_json_writer.h"

#include <string>

#include <nlohmann/json.hpp>

namespace apptracer {

namespace {

// Times relative to the first event stay far below 2^53 ns, so a double
// holds them to the nanosecond (absurd ones, from a damaged trace, are
// subtracted as doubles rather than overflow).
double microseconds_between(int64_t from, int64_t to) {
  int64_t ns = 0;
  if (__builtin_sub_overflow(to, from, &ns)) {
    return (static_cast<double>(to) - static_cast<double>(from)) / 1000.0;
  }
  return static_cast<double>(ns) / 1000.0;
}

}  // namespace

void ChromeJsonWriter::track(const TimelineTrack& track) {
  tracks_.push_back(track);
  if (started_) write_track(tracks_.size() - 1);
}

void ChromeJsonWriter::start(int64_t origin_ns) {
  started_ = true;
  origin_ns_ = origin_ns;
  out_ << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"origin_ns\":" << origin_ns_
       << "},\"traceEvents\":[\n";
  for (size_t i = 0; i < tracks_.size(); ++i) write_track(i);
}

void ChromeJsonWriter::finish() {
  if (!started_) start(0);
  out_ << "\n]}\n";
}

int64_t ChromeJsonWriter::tid_of(size_t track_index) const {
  const TimelineTrack& track = tracks_[track_index];
  if (track.kind == TimelineTrack::Kind::Thread) return track.tid;
  return kSyntheticTidBase + static_cast<int64_t>(track_index);
}

double ChromeJsonWriter::relative_us(int64_t ns) const {
  return microseconds_between(origin_ns_, ns);
}

void ChromeJsonWriter::emit(const nlohmann::json& event) {
  out_ << (first_event_ ? "" : ",\n")
       << event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  first_event_ = false;
}

void ChromeJsonWriter::write_track(size_t index) {
  const TimelineTrack& track = tracks_[index];
  if (track.kind == TimelineTrack::Kind::Process) {
    emit({{"ph", "M"}, {"name", "process_name"}, {"pid", track.pid}, {"tid", 0},
          {"args", {{"name", track.name}}}});
    return;
  }
  emit({{"ph", "M"}, {"name", "thread_name"}, {"pid", track.pid}, {"tid", tid_of(index)},
        {"args", {{"name", track.name}}}});
}

// The first slice starts first: its start is the origin.
void ChromeJsonWriter::slice(const TimelineSlice& slice) {
  if (!started_) start(slice.start_ns);
  const TimelineTrack& track = tracks_[slice.track];
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
  emit({{"ph", "X"}, {"name", slice.name}, {"cat", std::string(slice.category)}, {"pid", track.pid},
        {"tid", tid}, {"ts", relative_us(slice.start_ns)},
        {"dur", microseconds_between(slice.start_ns, slice.end_ns)}, {"args", std::move(args)}});
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

void write_chrome_json(std::ostream& out, const Timeline& timeline) {
  ChromeJsonWriter writer(out);
  replay_timeline(timeline, writer);
}

}  // namespace apptracer
