#include "frameworks/framework_ranges.h"

#include <memory>

#include "base/self_cost.h"
#include "buffer/interned_text_cache.h"
#include "buffer/record_buffers.h"
#include "frameworks/sub_allocation_events.h"

namespace apptracer::frameworks {

namespace {

thread_local InternedTextCache name_cache;

struct OpenRange {
  uint64_t start_ns;
  uint64_t appended;  // the thread's record count when it opened
  uint32_t name_id;
  uint32_t depth;
  FrameworkRangeKind kind;
};

// Deeper nesting than this is counted, not recorded (no model nests so deep).
constexpr uint32_t kMaxOpen = 128;
constexpr size_t kKinds = 8;

struct OpenRanges {
  OpenRange open[kMaxOpen];
  uint32_t size = 0;  // may exceed kMaxOpen
  uint32_t depth_of_kind[kKinds] = {};
};
// On the heap, made by a thread's first range: the library's thread-local
// storage must stay small, or a dlopen of it (CUDA_INJECTION64_PATH, ctypes)
// fails for want of static TLS space.
thread_local std::unique_ptr<OpenRanges> tls_ranges;

OpenRanges& open_ranges() {
  if (!tls_ranges) tls_ranges = std::make_unique<OpenRanges>();
  return *tls_ranges;
}

size_t kind_index(FrameworkRangeKind kind) { return static_cast<size_t>(kind) % kKinds; }

}  // namespace

bool ranges_recording() { return recording() && recording_sink().strings != nullptr; }

uint32_t range_name(std::string_view name) {
  if (!ranges_recording()) return 0;
  return name_cache.id(*recording_sink().strings, name);
}

void open_range(FrameworkRangeKind kind, uint32_t name_id) {
  self_cost::Timer timer(self_cost::Site::FrameworkRange);
  if (!ranges_recording()) return;
  OpenRanges& ranges = open_ranges();
  uint32_t& depth = ranges.depth_of_kind[kind_index(kind)];
  if (ranges.size < kMaxOpen) {
    ranges.open[ranges.size] = {recording_sink().now_ns(), RecordBuffers::appended_by_this_thread(),
                                name_id, depth, kind};
  }
  ++ranges.size;
  ++depth;
}

bool close_range(int64_t seq, bool keep, RangeName name, const void* context) {
  self_cost::Timer timer(self_cost::Site::FrameworkRange);
  // Opened before recording began: nothing to close.
  if (!tls_ranges || tls_ranges->size == 0) return false;
  OpenRanges& ranges = *tls_ranges;
  uint32_t at = --ranges.size;
  if (at >= kMaxOpen) return false;
  const OpenRange open = ranges.open[at];
  uint32_t& depth = ranges.depth_of_kind[kind_index(open.kind)];
  if (depth > 0) --depth;
  if (!ranges_recording()) return false;
  const FrameworkSink& sink = recording_sink();
  bool worked = RecordBuffers::appended_by_this_thread() != open.appended;
  if (!worked && !keep && !sink.every_range) return false;
  Record record{};
  record.type = RecordType::FrameworkRange;
  FrameworkRangeRecord& r = record.framework_range;
  r.start_ns = open.start_ns;
  r.end_ns = sink.now_ns();
  r.seq = seq;
  r.name_id = open.name_id == 0 && name ? name(context) : open.name_id;
  r.depth = open.depth;
  r.kind = open.kind;
  sink.buffers->append(record);
  return true;
}

}  // namespace apptracer::frameworks
