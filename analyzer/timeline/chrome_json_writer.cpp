#include "analyzer/timeline/chrome_json_writer.h"

#include <algorithm>
#include <cmath>
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

// The nearest whole microsecond.
int64_t whole_microseconds(double us) { return std::llround(us); }

std::string compact(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Kineto's names for the device properties it writes.
nlohmann::json device_properties(const std::vector<TimelineDevice>& devices) {
  nlohmann::json list = nlohmann::json::array();
  for (const TimelineDevice& device : devices) {
    nlohmann::json properties = {{"id", device.id}, {"name", device.name}};
    if (device.total_memory_bytes) properties["totalGlobalMem"] = *device.total_memory_bytes;
    if (device.cc_major) properties["computeMajor"] = *device.cc_major;
    if (device.cc_minor) properties["computeMinor"] = *device.cc_minor;
    if (device.sm_count) properties["numSms"] = *device.sm_count;
    list.push_back(std::move(properties));
  }
  return list;
}

}  // namespace

void ChromeJsonWriter::track(const TimelineTrack& track) {
  tracks_.push_back(track);
  if (started_) write_track(tracks_.size() - 1);
}

// Kineto's header. Holistic Trace Analysis finds a file's rank with the
// pattern `"rank":\s+(\d+)` on the file's lines, so distributedInfo is
// written as Kineto writes it, a space after each colon.
void ChromeJsonWriter::start(int64_t origin_ns) {
  started_ = true;
  origin_ns_ = origin_ns;
  out_ << "{\"schemaVersion\": 1,\n\"deviceProperties\": " << compact(device_properties(source_.devices))
       << ",\n";
  if (source_.rank) {
    out_ << "\"distributedInfo\": {\"backend\": " << compact(source_.rank->backend)
         << ", \"rank\": " << source_.rank->rank << ", \"world_size\": " << source_.rank->world_size
         << "},\n";
  }
  out_ << "\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"origin_ns\": " << origin_ns_
       << "},\n\"traceEvents\": [\n";
  for (size_t i = 0; i < tracks_.size(); ++i) write_track(i);
}

void ChromeJsonWriter::finish() {
  if (!started_) start(0);
  out_ << "\n]}\n";
}

ChromeJsonWriter::Thread ChromeJsonWriter::thread_of(size_t track_index) const {
  const TimelineTrack& track = tracks_[track_index];
  int64_t synthetic = kSyntheticTidBase + static_cast<int64_t>(track_index);
  if (track.kind == TimelineTrack::Kind::Stream)
    return {track.device.value_or(synthetic), track.stream.value_or(synthetic)};
  return {track.pid, track.tid};
}

nlohmann::json ChromeJsonWriter::relative_us(int64_t ns) const {
  double us = microseconds_between(origin_ns_, ns);
  if (times_ == ChromeJsonTimes::WholeMicroseconds) return whole_microseconds(us);
  return us;
}

nlohmann::json ChromeJsonWriter::duration_us(int64_t start_ns, int64_t end_ns) const {
  if (times_ == ChromeJsonTimes::Nanoseconds) return microseconds_between(start_ns, end_ns);
  int64_t start = whole_microseconds(microseconds_between(origin_ns_, start_ns));
  int64_t end = whole_microseconds(microseconds_between(origin_ns_, end_ns));
  return end == start && end_ns > start_ns ? int64_t{1} : end - start;
}

void ChromeJsonWriter::emit(const nlohmann::json& event) {
  out_ << (first_event_ ? "" : ",\n") << compact(event);
  first_event_ = false;
}

// NVTX tracks share their thread's tid, which the thread's own track names.
void ChromeJsonWriter::write_track(size_t index) {
  const TimelineTrack& track = tracks_[index];
  Thread thread = thread_of(index);
  switch (track.kind) {
    case TimelineTrack::Kind::Process:
      emit({{"ph", "M"}, {"name", "process_name"}, {"pid", track.pid}, {"tid", 0},
            {"args", {{"name", track.name}}}});
      emit({{"ph", "M"}, {"name", "process_labels"}, {"pid", track.pid}, {"tid", 0},
            {"args", {{"labels", "CPU"}}}});
      return;
    case TimelineTrack::Kind::Nvtx:
    case TimelineTrack::Kind::Counter:
      return;
    case TimelineTrack::Kind::Stream:
      if (std::find(gpu_processes_.begin(), gpu_processes_.end(), thread.pid) == gpu_processes_.end()) {
        gpu_processes_.push_back(thread.pid);
        std::string gpu = "GPU " + (track.device ? std::to_string(*track.device) : std::string("?"));
        emit({{"ph", "M"}, {"name", "process_name"}, {"pid", thread.pid}, {"tid", 0},
              {"args", {{"name", gpu}}}});
        emit({{"ph", "M"}, {"name", "process_labels"}, {"pid", thread.pid}, {"tid", 0},
              {"args", {{"labels", gpu}}}});
      }
      break;
    case TimelineTrack::Kind::Thread:
      break;
  }
  emit({{"ph", "M"}, {"name", "thread_name"}, {"pid", thread.pid}, {"tid", thread.tid},
        {"args", {{"name", track.name}}}});
}

// The first slice or counter value comes first: its time is the origin.
void ChromeJsonWriter::slice(const TimelineSlice& slice) {
  if (!started_) start(slice.start_ns);
  nlohmann::json args = nlohmann::json::object();
  for (const TimelineArg& arg : slice.args) {
    std::visit(
        [&](const auto& value) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(value)>, std::monostate>)
            args[std::string(arg.name)] = value;
        },
        arg.value);
  }
  Thread thread = thread_of(slice.track);
  nlohmann::json ts = relative_us(slice.start_ns);
  emit({{"ph", "X"}, {"name", slice.name}, {"cat", std::string(slice.category)}, {"pid", thread.pid},
        {"tid", thread.tid}, {"ts", ts}, {"dur", duration_us(slice.start_ns, slice.end_ns)},
        {"args", std::move(args)}});
  // Flow events bind to the slice enclosing their timestamp on their thread.
  auto flow = [&](const char* phase, uint64_t id) {
    const char* name = is_call_flow(id) ? "ac2g" : "dvdg";
    nlohmann::json event = {{"ph", phase}, {"id", id},       {"pid", thread.pid}, {"tid", thread.tid},
                            {"ts", ts},    {"cat", name}, {"name", name}};
    if (phase[0] == 'f') event["bp"] = "e";
    emit(event);
  };
  for (uint64_t id : slice.flows_out) flow("s", id);
  for (uint64_t id : slice.flows_in) flow("f", id);
}

void ChromeJsonWriter::counter(const TimelineCounter& counter) {
  if (!started_) start(counter.ns);
  const TimelineTrack& track = tracks_[counter.track];
  emit({{"ph", "C"}, {"name", track.name}, {"pid", track.pid}, {"ts", relative_us(counter.ns)},
        {"args", {{"bytes", counter.value}}}});
}

void write_chrome_json(std::ostream& out, const Timeline& timeline) {
  ChromeJsonWriter writer(out);
  replay_timeline(timeline, writer);
}

}  // namespace apptracer
