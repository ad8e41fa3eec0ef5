#include "frameworks/sub_allocation_events.h"

#include <atomic>

#include "base/self_cost.h"

namespace apptracer::frameworks {

namespace {

// The tracer's start, which a static constructor of another file can run,
// sets the sink: it must be constant-initialized. A member that needs a
// constructor (a std::string) would have the sink built at load time after
// it was set, emptying it under a recording tracer; then this constexpr
// fails to compile.
constexpr FrameworkSink kNotRecording{};
FrameworkSink sink = kNotRecording;
std::atomic<bool> started{false};
// Indexed by SubAllocator's value; refused allocators are false.
std::atomic<bool> refused[4];

size_t index_of(SubAllocator allocator) {
  size_t index = static_cast<size_t>(allocator);
  return index < 4 ? index : 0;
}

}  // namespace

// A recording starts trusting every allocator until its events prove wrong.
void start_recording(const FrameworkSink& new_sink) {
  for (std::atomic<bool>& flag : refused) flag.store(false, std::memory_order_relaxed);
  sink = new_sink;
  started.store(new_sink.buffers != nullptr && new_sink.now_ns != nullptr,
                std::memory_order_release);
}

bool recording() { return started.load(std::memory_order_acquire); }

const FrameworkSink& recording_sink() { return sink; }

void set_meta(const std::string& key, const std::string& value) {
  if (recording() && sink.set_meta) sink.set_meta(key, value);
}

bool allocator_enabled(SubAllocator allocator) {
  return !refused[index_of(allocator)].load(std::memory_order_relaxed);
}

void refuse_allocator(SubAllocator allocator) {
  refused[index_of(allocator)].store(true, std::memory_order_relaxed);
}

bool record_event(const FrameworkEvent& event) {
  self_cost::Timer timer(self_cost::Site::FrameworkAllocator);
  if (!recording() || !allocator_enabled(event.allocator)) return false;
  Record record{};
  record.type = RecordType::SubAllocation;
  SubAllocationRecord& r = record.sub_allocation;
  r.address = event.address;
  r.bytes = event.bytes;
  r.block_bytes = event.block_bytes;
  r.ns = sink.now_ns();
  r.stream = event.stream;
  r.pool_id = event.pool_id;
  r.device = event.device;
  r.event = event.event;
  r.allocator = event.allocator;
  sink.buffers->append(record);
  return true;
}

const char* meta_name(SubAllocator allocator) {
  switch (allocator) {
    case SubAllocator::PytorchCaching: return "pytorch";
    case SubAllocator::CupyPool: return "cupy";
  }
  return "unknown";
}

}  // namespace apptracer::frameworks
