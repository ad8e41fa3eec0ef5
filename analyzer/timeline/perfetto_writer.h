// Writes a timeline in Perfetto's protobuf trace format (proto/perfetto_trace.proto),
// which ui.perfetto.dev opens directly.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <ostream>
#include <queue>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analyzer/timeline/timeline.h"

namespace apptracer {

namespace perfetto {
class DebugAnnotation;
class TracePacket;
}  // namespace perfetto

// Slices on one track must nest; GPU records that overlap on one stream
// (clock skew) are clipped to the enclosing slice so the file stays valid.
// Packets are written as slices come, in time order; only the slices still
// open are held. Slice names, categories, argument names and string argument
// values are interned: each string is written once and named by an id after
// (a training trace's million kernel slices share a few hundred names, and
// their arguments a few thousand values).
class PerfettoWriter : public TimelineSink {
 public:
  // The fewest bytes a slice takes: its begin packet (sequence, flags,
  // time, track, type, name and category ids) and its end packet, each at
  // least two bytes a field. What a file of N slices cannot be smaller than.
  static constexpr size_t kMinSliceBytes = 24;

  // The most the interned string argument values may hold (their text and
  // kInternedValueEntryBytes each): once a new one would pass it, those held
  // are forgotten and new values take new ids (an id is never given to two
  // values). Values unique to their slice would otherwise grow the writer
  // with the trace; a training trace's few thousand repeated ones fit.
  static constexpr size_t kMaxInternedValueBytes = size_t{8} << 20;
  static constexpr size_t kInternedValueEntryBytes = 64;

  explicit PerfettoWriter(std::ostream& out, size_t max_interned_value_bytes = kMaxInternedValueBytes);
  ~PerfettoWriter() override;
  void source(const TimelineSource&) override {}
  void track(const TimelineTrack& track) override;
  void slice(const TimelineSlice& slice) override;
  void counter(const TimelineCounter& counter) override;
  void finish() override;

 private:
  // Writes the end of every open slice that ends at or before `ns`.
  void end_slices_until(int64_t ns);

  // A kind of interned string: ids from 1, in the order first written.
  struct Interned {
    std::deque<std::string> texts;  // what `iids` keys view
    std::unordered_map<std::string_view, uint64_t> iids;
    // Ids by the address a text comes from (a stored text's or a literal's:
    // the same address and length, the same text), found without hashing the
    // text: a direct-mapped cache, an entry per slot, the last one seen there.
    // Hashing names and values was a tenth of a training trace's timeline.
    struct Keyed {
      const void* key = nullptr;
      size_t size = 0;
      uint64_t iid = 0;
    };
    static constexpr size_t kKeyedSlots = 4096;
    std::vector<Keyed> keyed = std::vector<Keyed>(kKeyedSlots);
    uint64_t next_iid = 1;
    // The string's id; `added` when this is its first use. `key`: null, or
    // the address of the text this one was copied from, which outlives the writer.
    uint64_t iid(std::string_view text, bool& added, const void* key = nullptr);
    // Forgets every string; ids given later are new.
    void forget();
  };

  // Sets a string argument's value by its id, interning it in `packet` on
  // first use; `key` as Interned::iid's.
  void set_string_value(perfetto::DebugAnnotation& annotation, perfetto::TracePacket& packet,
                        std::string_view text, const void* key);

  struct Packets;

  std::ostream& out_;
  std::unique_ptr<Packets> packets_;
  bool first_packet_ = true;
  Interned names_, categories_, annotation_names_, values_;
  size_t value_bytes_ = 0;  // what values_ holds, as kMaxInternedValueBytes counts it
  size_t max_value_bytes_;
  std::vector<uint64_t> uuids_;                // by track index
  std::vector<std::vector<int64_t>> open_;     // by track index: ends of the open slices
  // Pending ends: (end, track, -depth), the earliest first and, at one time,
  // the innermost first.
  using End = std::tuple<int64_t, size_t, int64_t>;
  std::priority_queue<End, std::vector<End>, std::greater<End>> ends_;
};

void write_perfetto_trace(std::ostream& out, const Timeline& timeline);

}  // namespace apptracer
