#include "analyzer/timeline/perfetto_writer.h"

#include <algorithm>
#include <climits>
#include <string>

#include "perfetto_trace.pb.h"

namespace apptracer {

namespace {

namespace pb = ::apptracer::perfetto;

// Every packet comes from this one writer.
constexpr uint32_t kSequenceId = 1;

void write_varint(std::ostream& out, uint64_t value) {
  while (value >= 0x80) {
    out.put(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.put(static_cast<char>(value));
}

// A Trace message is the concatenation of its `packet` fields, so packets are
// streamed one at a time instead of building the whole trace in memory.
// `bytes` is reused from packet to packet.
void write_packet(std::ostream& out, const pb::TracePacket& packet, std::string& bytes) {
  packet.SerializeToString(&bytes);
  write_varint(out, (uint64_t{1} << 3) | 2);  // field 1, length-delimited
  write_varint(out, bytes.size());
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

template <typename Entry>
void add_interned(Entry* entry, uint64_t iid, std::string_view text) {
  entry->set_iid(iid);
  entry->set_name(std::string(text));
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
    case TimelineTrack::Kind::Counter:
      descriptor->mutable_counter()->set_unit(pb::CounterDescriptor::UNIT_SIZE_BYTES);
      [[fallthrough]];
    case TimelineTrack::Kind::Nvtx:
    case TimelineTrack::Kind::Stream:
      descriptor->set_parent_uuid(track.parent_uuid);
      descriptor->set_name(track.name);
      break;
  }
  return packet;
}

}  // namespace

// The packets slices are written with, cleared and filled again for each:
// a training trace has millions, and protobuf keeps a cleared message's
// parts (its event, its annotations) for the next.
struct PerfettoWriter::Packets {
  pb::TracePacket slice;
  pb::TracePacket end;
  std::string bytes;
};

PerfettoWriter::PerfettoWriter(std::ostream& out, size_t max_interned_value_bytes)
    : out_(out), packets_(std::make_unique<Packets>()), max_value_bytes_(max_interned_value_bytes) {
  packets_->end.set_trusted_packet_sequence_id(kSequenceId);
  packets_->end.mutable_track_event()->set_type(pb::TrackEvent::TYPE_SLICE_END);
}

PerfettoWriter::~PerfettoWriter() = default;

uint64_t PerfettoWriter::Interned::iid(std::string_view text, bool& added, const void* key) {
  Keyed* slot = nullptr;
  if (key) {
    // Fibonacci hashing of the address: its low bits are alignment.
    uint64_t mixed = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)) * 0x9E3779B97F4A7C15ull;
    slot = &keyed[mixed >> 52];  // 12 bits: kKeyedSlots
    if (slot->key == key && slot->size == text.size()) {
      added = false;
      return slot->iid;
    }
  }
  auto found = iids.find(text);
  added = found == iids.end();
  uint64_t id = found != iids.end() ? found->second : 0;
  if (added) {
    texts.emplace_back(text);
    id = iids.emplace(texts.back(), next_iid++).first->second;
  }
  if (slot) *slot = {key, text.size(), id};
  return id;
}

void PerfettoWriter::Interned::forget() {
  iids.clear();
  std::fill(keyed.begin(), keyed.end(), Keyed{});
  texts.clear();
}

void PerfettoWriter::set_string_value(pb::DebugAnnotation& annotation, pb::TracePacket& packet,
                                      std::string_view text, const void* key) {
  size_t cost = text.size() + kInternedValueEntryBytes;
  if (value_bytes_ + cost > max_value_bytes_ && !values_.iids.count(text)) {
    values_.forget();
    value_bytes_ = 0;
  }
  bool added = false;
  uint64_t iid = values_.iid(text, added, key);
  annotation.set_string_value_iid(iid);
  if (!added) return;
  value_bytes_ += cost;
  add_interned(packet.mutable_interned_data()->add_debug_annotation_string_values(), iid, text);
}

void PerfettoWriter::track(const TimelineTrack& track) {
  pb::TracePacket packet = track_packet(track);
  if (first_packet_) packet.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  first_packet_ = false;
  write_packet(out_, packet, packets_->bytes);
  uuids_.push_back(track.uuid);  // tracks come in index order
  open_.emplace_back();
}

void PerfettoWriter::end_slices_until(int64_t ns) {
  while (!ends_.empty() && std::get<0>(ends_.top()) <= ns) {
    auto [end, track, depth] = ends_.top();
    ends_.pop();
    open_[track].pop_back();
    pb::TracePacket& packet = packets_->end;
    packet.set_timestamp(static_cast<uint64_t>(end));
    packet.mutable_track_event()->set_track_uuid(uuids_[track]);
    write_packet(out_, packet, packets_->bytes);
  }
}

// Slices come by start time, longer first on ties: one that starts inside
// the innermost open slice of its track nests in it (clipped to its end),
// and every slice that ended by then is closed first.
void PerfettoWriter::slice(const TimelineSlice& slice) {
  end_slices_until(slice.start_ns);
  std::vector<int64_t>& open = open_[slice.track];
  int64_t end = open.empty() ? slice.end_ns : std::min(slice.end_ns, open.back());
  open.push_back(end);
  ends_.emplace(end, slice.track, -static_cast<int64_t>(open.size()));

  pb::TracePacket& packet = packets_->slice;
  packet.Clear();
  packet.set_trusted_packet_sequence_id(kSequenceId);
  packet.set_sequence_flags(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
  packet.set_timestamp(static_cast<uint64_t>(slice.start_ns));
  pb::TrackEvent* event = packet.mutable_track_event();
  event->set_track_uuid(uuids_[slice.track]);
  event->set_type(pb::TrackEvent::TYPE_SLICE_BEGIN);
  // Each string goes once, with the first packet that names it.
  bool added = false;
  uint64_t iid = names_.iid(slice.name, added, slice.name_key);
  event->set_name_iid(iid);
  if (added) add_interned(packet.mutable_interned_data()->add_event_names(), iid, slice.name);
  iid = categories_.iid(slice.category, added, slice.category.data());
  event->add_category_iids(iid);
  if (added) add_interned(packet.mutable_interned_data()->add_event_categories(), iid, slice.category);
  for (const TimelineArg& arg : slice.args) {
    pb::DebugAnnotation* annotation = event->add_debug_annotations();
    iid = annotation_names_.iid(arg.name, added, arg.name.data());
    annotation->set_name_iid(iid);
    if (added) add_interned(packet.mutable_interned_data()->add_debug_annotation_names(), iid, arg.name);
    if (const auto* value = std::get_if<int64_t>(&arg.value)) {
      annotation->set_int_value(*value);
    } else if (const auto* value = std::get_if<double>(&arg.value)) {
      annotation->set_double_value(*value);
    } else if (const auto* value = std::get_if<std::string>(&arg.value)) {
      set_string_value(*annotation, packet, *value, arg.value_key);
    } else if (const auto* dims = std::get_if<Dim3>(&arg.value)) {
      set_string_value(*annotation, packet,
                       std::to_string((*dims)[0]) + "," + std::to_string((*dims)[1]) + "," +
                           std::to_string((*dims)[2]),
                       nullptr);
    }
  }
  for (uint64_t flow : slice.flows_out) event->add_flow_ids(flow);
  for (uint64_t flow : slice.flows_in) event->add_terminating_flow_ids(flow);
  write_packet(out_, packet, packets_->bytes);
}

void PerfettoWriter::counter(const TimelineCounter& counter) {
  end_slices_until(counter.ns);
  pb::TracePacket packet;
  packet.set_trusted_packet_sequence_id(kSequenceId);
  packet.set_timestamp(static_cast<uint64_t>(counter.ns));
  pb::TrackEvent* event = packet.mutable_track_event();
  event->set_track_uuid(uuids_[counter.track]);
  event->set_type(pb::TrackEvent::TYPE_COUNTER);
  event->set_counter_value(counter.value);
  write_packet(out_, packet, packets_->bytes);
}

void PerfettoWriter::finish() { end_slices_until(INT64_MAX); }

void write_perfetto_trace(std::ostream& out, const Timeline& timeline) {
  PerfettoWriter writer(out);
  replay_timeline(timeline, writer);
}

}  // namespace apptracer
