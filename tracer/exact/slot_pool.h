// The slots of one CUDA context: a fixed set, allocated once, handed to
// launches and read back lazily. A launch's slot is read back when its
// stream or context is synchronized, when its stream is destroyed, at exit,
// or, when every slot is in flight, as the oldest one (the copy back waits
// for that kernel). No host synchronization per launch in steady state.
//
// Reading back a slot: the header and first entries in one copy, the rest in
// a second only when there are more; then the header is reset for the next
// use with a new epoch (the index is cleared only when epochs wrap). Copies
// wait for kernels, so they happen outside the pool's lock: a slot being read
// back belongs to the thread reading it, and other launches go on meanwhile.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "exact/exact_records.h"
#include "exact/slot_decoder.h"

namespace apptracer::exact {

using StreamHandle = void*;  // a Sanitizer_StreamHandle

// What the pool needs of the GPU: the sanitizer's memory API in the tracer,
// host memory standing in for it in the CPU tests. False or null: it failed.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual void* allocate(void* context, uint64_t bytes) = 0;
  virtual void release(void* context, void* device) = 0;
  // After the stream's earlier work; returns when the copy is done.
  virtual bool to_host(void* host, const void* device, uint64_t bytes, StreamHandle stream) = 0;
  // Ordered on the stream; `host` may be reused when it returns.
  virtual bool to_device(void* device, const void* host, uint64_t bytes, StreamHandle stream) = 0;
  virtual bool zero(void* device, uint64_t bytes, StreamHandle stream) = 0;
  virtual bool synchronize(StreamHandle stream) = 0;
};

struct PoolOptions {
  uint32_t slots = 8;
  uint32_t capacity = 1u << 18;  // pages a launch may touch before its table overflows (1 GiB)
};

// Called for every launch read back (on the thread that read it, holding no lock).
using RetiredSink = std::function<void(const LaunchFacts&, const DecodedLaunch&)>;

class SlotPool {
 public:
  SlotPool(DeviceMemory& memory, void* context, PoolOptions options, RetiredSink sink);

  // The slot (device address) to give a launch's patch; null when the pool
  // has no memory, and the launch is then reported as never read back.
  void* begin_launch(const LaunchFacts& launch, StreamHandle stream);
  // `stream` was synchronized (or is going away): its launches are read back.
  void retire_stream(StreamHandle stream);
  void retire_all();
  // Frees the device memory; launches in flight are retired first.
  void release();

  size_t in_flight() const;
  uint64_t slot_bytes() const;

 private:
  enum class State { Free, Busy, Retiring, Broken };  // Broken: a copy failed; never reused
  struct Slot {
    char* device = nullptr;
    uint32_t epoch = 1;
    State state = State::Free;
    uint64_t order = 0;
    LaunchFacts launch;
    StreamHandle stream = nullptr;
  };

  bool allocate(StreamHandle stream);
  // Reads back a slot this thread marked Retiring, then frees it (the lock not held).
  void retire(Slot& slot);
  // Marks the busy slots on `stream` (all, when `any_stream`) Retiring and
  // returns them oldest first; with `only_oldest`, just the oldest.
  std::vector<Slot*> take_busy(StreamHandle stream, bool any_stream, bool only_oldest);
  Slot* free_slot();

  DeviceMemory& memory_;
  void* context_;
  PoolOptions options_;
  uint32_t index_words_;
  RetiredSink sink_;
  mutable std::mutex mutex_;  // slot states, the arena
  void* arena_ = nullptr;
  bool failed_ = false;
  std::vector<Slot> slots_;
  uint64_t next_order_ = 0;
};

}  // namespace apptracer::exact
