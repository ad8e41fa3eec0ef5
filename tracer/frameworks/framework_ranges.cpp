#include "frameworks/framework_ranges.h"

#include "base/self_cost.h"
#include "buffer/interned_text_cache.h"
#include "frameworks/sub_allocation_events.h"

namespace apptracer::frameworks {

namespace {

thread_local InternedTextCache name_cache;

bool append(FrameworkRangeKind kind, FrameworkRangeEvent event, uint32_t name_id, int64_t seq) {
  self_cost::Timer timer(self_cost::Site::FrameworkRange);
  if (!ranges_recording()) return false;
  const FrameworkSink& sink = recording_sink();
  Record record{};
  record.type = RecordType::FrameworkRange;
  FrameworkRangeRecord& r = record.framework_range;
  r.ns = sink.now_ns();
  r.seq = seq;
  r.name_id = name_id;
  r.kind = kind;
  r.event = event;
  sink.buffers->append(record);
  return true;
}

}  // namespace

bool ranges_recording() { return recording() && recording_sink().strings != nullptr; }

uint32_t range_name(std::string_view name) {
  if (!ranges_recording()) return 0;
  return name_cache.id(*recording_sink().strings, name);
}

bool push_range(FrameworkRangeKind kind, uint32_t name_id, int64_t seq) {
  return append(kind, FrameworkRangeEvent::Push, name_id, seq);
}

bool pop_range(FrameworkRangeKind kind) { return append(kind, FrameworkRangeEvent::Pop, 0, -1); }

}  // namespace apptracer::frameworks
