#include "perfetto_writer.h"

#include <algorithm>
#include <string>
#include <vector>

#include "perfetto_trace.pb.h"

namespace apptracer {

namespace {

namespace pb = ::apptracer::perfetto;

// Every packet comes from this one writer.
constexpr uint32_t kSequenceId = 1;

struct SliceEvent {
  int64_t ns;
  size_t slice;
  bool begin;
};

void write_varint(std::ostream& out, uint64_t value) {
  while (value >= 0x80) {
    out.put(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.put(static_cast<char>(value));
}

// A Trace message is the concatenation of its `packet` fields, so packets are
// streamed one at a time instead of building the whole trace in memory.
void write_packet(std::ostream& out, const pb::TracePacket& packet) {
  std::string bytes = packet.SerializeAsString();
  write_varint(out, (uint64_t{1} << 3) | 2);  // field 1, length-delimited
  write_varint(out, bytes.size());
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void set_annotation(pb::DebugAnnotation& annotation, const TimelineArg& arg) {
  annotation.set_name(std::string(arg.name));
  if (std::holds_alternative<int64_t>(arg.value)) {
    annotation.set_int_value(std::get<int64_t>(arg.value));
  } else if (std::holds_alternative<double>(arg.value)) {
    annotation.set_double_value(std::get<double>(arg.value));
  } else if (std::holds_alternative<std::string>(arg.value)) {
    annotation.set_string_value(std::get<std::string>(arg.value));
  }
}

pb::TracePacket track_packet(const TimelineTrack& track) {
  pb::TracePacket packet;
  packet.set_trusted_packet_sequence_id(kSequenceId);
  pb::TrackDescriptor* descriptor = packet.mutable_track_descriptor();
  descriptor->set_uuid(track.uuid);
  switch (track.kind) {
    case TimelineTrack::Kind::Process:
      descriptor->mutable_process()->set_pid(static_cast<int32_t>(track.pid));
      descriptor->mutable_process()->set_process_name(track.name);
      break;
    case TimelineTrack::Kind::Thread:
      descriptor->mutable_thread()->set_pid(static_cast<int32_t>(track.pid));
      descriptor->mutable_thread()->set_tid(static_cast<int32_t>(track.tid));
      descriptor->mutable_thread()->set_thread_name(track.name);
      break;
    case TimelineTrack::Kind::Nvtx:
    case TimelineTrack::Kind::Stream:
      descriptor->set_parent_uuid(track.parent_uuid);
      descriptor->set_name(track.name);
      break;
  }
  return packet;
}

// Begin/end events of every slice in an order that nests on each track:
// per track, slices sorted by start (longer first on ties), a stack of open
// slices closed as soon as the next one starts after them; then all tracks
// merged by time, keeping each track's order.
std::vector<SliceEvent> nested_events(const Timeline& timeline, std::vector<int64_t>& end_ns) {
  std::vector<std::vector<size_t>> by_track(timeline.tracks.size());
  for (size_t i = 0; i < timeline.slices.size(); ++i) by_track[timeline.slices[i].track].push_back(i);
  end_ns.resize(timeline.slices.size());
  std::vector<SliceEvent> events;
  events.reserve(2 * timeline.slices.size());
  for (std::vector<size_t>& slices : by_track) {
    std::stable_sort(slices.begin(), slices.end(), [&](size_t a, size_t b) {
      const TimelineSlice& x = timeline.slices[a];
      const TimelineSlice& y = timeline.slices[b];
      return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.end_ns > y.end_ns;
    });
    std::vector<size_t> open;
    for (size_t slice : slices) {
      int64_t start = timeline.slices[slice].start_ns;
      while (!open.empty() && end_ns[open.back()] <= start) {
        events.push_back({end_ns[open.back()], open.back(), false});
        open.pop_back();
      }
      end_ns[slice] = timeline.slices[slice].end_ns;
      if (!open.empty()) end_ns[slice] = std::min(end_ns[slice], end_ns[open.back()]);
      events.push_back({start, slice, true});
      open.push_back(slice);
    }
    while (!open.empty()) {
      events.push_back({end_ns[open.back()], open.back(), false});
      open.pop_back();
    }
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const SliceEvent& a, const SliceEvent& b) { return a.ns < b.ns; });
  return events;
}

}  // namespace

void write_perfetto_trace(std::ostream& out, const Timeline& timeline, Progress* progress) {
  bool first = true;
  for (const TimelineTrack& track : timeline.tracks) {
    pb::TracePacket packet = track_packet(track);
    if (first) packet.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    first = false;
    write_packet(out, packet);
  }
  std::vector<int64_t> end_ns;
  std::vector<SliceEvent> events = nested_events(timeline, end_ns);
  int64_t written = 0;
  for (const SliceEvent& event : events) {
    if (progress && ++written % 65536 == 0) {
      progress->update("writing events", written, static_cast<int64_t>(events.size()));
    }
    const TimelineSlice& slice = timeline.slices[event.slice];
    pb::TracePacket packet;
    packet.set_trusted_packet_sequence_id(kSequenceId);
    packet.set_timestamp(static_cast<uint64_t>(event.ns));
    pb::TrackEvent* track_event = packet.mutable_track_event();
    track_event->set_track_uuid(timeline.tracks[slice.track].uuid);
    if (event.begin) {
      track_event->set_type(pb::TrackEvent::TYPE_SLICE_BEGIN);
      track_event->set_name(timeline.name_of(slice));
      track_event->add_categories(std::string(slice.category));
      for (const TimelineArg& arg : slice.args) set_annotation(*track_event->add_debug_annotations(), arg);
      for (uint64_t flow : slice.flows_out) track_event->add_flow_ids(flow);
      for (uint64_t flow : slice.flows_in) track_event->add_terminating_flow_ids(flow);
    } else {
      track_event->set_type(pb::TrackEvent::TYPE_SLICE_END);
    }
    write_packet(out, packet);
  }
}

}  // namespace apptracer
