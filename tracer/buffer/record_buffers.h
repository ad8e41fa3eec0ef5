// Per-thread record buffers and their hand-off to the writer thread.
//
// The hot path (`append`) copies one Record into the calling thread's current
// chunk and publishes it with a single release store: no lock, no allocation.
// A full chunk goes on a queue for the writer. The writer also reads the
// published prefix of every thread's unfilled chunk on each pass, so records
// of an idle thread reach the database within one writer period (what bounds
// the loss on SIGKILL). Only the writer recycles chunks, which is what makes
// reading a chunk another thread is still filling safe.
//
// Memory is capped: when every chunk is in flight the producer waits for the
// writer (never drops silently); the time spent waiting is counted. The wait
// is bounded by the writer's progress, not by time alone: a producer waits as
// long as the writer keeps working, and once the writer has shown no progress
// for the stall limit the buffers are *stalled*: the waiting record and every
// later one is dropped and counted, without waiting, until the writer frees a
// chunk. A producer may hold locks the writer needs (CUPTI's, the program's):
// without the bound, one such cycle hung a training run for good.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "apptracer/records.h"

namespace apptracer {

class RecordBuffers {
 public:
  static constexpr uint32_t kChunkRecords = 1024;  // 128 KiB per chunk

  // `stall_ns`: how long the writer may show no progress before producers
  // stop waiting for it.
  explicit RecordBuffers(size_t max_bytes, uint64_t stall_ns = kDefaultStallNs);
  static constexpr uint64_t kDefaultStallNs = 5'000'000'000;

  // Hot path. Stamps the record with the calling thread's id.
  void append(Record& record);

  // Writer side: hands every published record to `consume`, in per-thread
  // order, in runs of consecutive records.
  using Consumer = std::function<void(const Record* records, size_t count)>;
  void drain(const Consumer& consume);

  // Blocks the writer until a chunk is full or `period` has passed.
  void wait_for_work(std::chrono::milliseconds period);
  void wake_writer();

  // Writer side: it is working (called at least every few thousand records
  // while a pass runs); `stage` names what it does, for the stall report.
  void note_progress(const char* stage);
  const char* consumer_stage() const { return stage_.load(std::memory_order_relaxed); }

  // Called once per stall, on the producer that found it, outside every lock
  // of the buffers: `waited_ns` since the writer's last progress.
  void set_stall_reporter(std::function<void(uint64_t waited_ns)> reporter) {
    stall_reporter_ = std::move(reporter);
  }
  uint64_t stalls() const { return stalls_.load(std::memory_order_relaxed); }

  // After close(), appends are counted as dropped instead of stored.
  void close();
  bool closed() const { return closed_.load(std::memory_order_acquire); }

  // The writer thread may append too (activity CUPTI hands over when the
  // writer asks for it): it never waits for memory, since only it frees any.
  void mark_writer_thread();

  // In a forked child: forget the parent's buffers and threads.
  void reset_after_fork();

  // The calling thread's OS id (cached).
  static uint32_t current_tid();
  // Records the calling thread has appended so far: whether anything was
  // recorded between two readings (framework_ranges.h keeps only such ranges).
  static uint64_t appended_by_this_thread();

  uint64_t producer_wait_ns() const { return producer_wait_ns_.load(); }
  uint64_t dropped_records() const { return dropped_.load(); }
  // Records handed to the writer so far (counted on its side, so the hot
  // path shares no counter between threads).
  uint64_t drained_records() const { return drained_.load(std::memory_order_relaxed); }

 private:
  struct Chunk;
  struct ThreadBuffer;

  ThreadBuffer* attach_thread();
  Chunk* acquire_chunk();
  void submit(Chunk* chunk);
  void recycle(Chunk* chunk);
  friend struct ThreadExit;
  void detach_thread(ThreadBuffer* buffer);

  const size_t max_chunks_;
  const uint64_t stall_ns_;
  std::atomic<bool> closed_{false};
  std::atomic<bool> any_thread_attached_{false};

  std::mutex pool_mutex_;
  std::condition_variable pool_available_;
  Chunk* free_chunks_ = nullptr;
  size_t allocated_chunks_ = 0;
  // The writer's last sign of life (a recycled chunk, note_progress), and
  // whether producers gave up waiting for it.
  std::atomic<uint64_t> last_progress_ns_{0};
  std::atomic<bool> stalled_{false};
  std::atomic<const char*> stage_{"not started"};
  std::function<void(uint64_t)> stall_reporter_;
  std::atomic<uint64_t> stalls_{0};

  std::mutex queue_mutex_;
  std::condition_variable queue_ready_;
  Chunk* queue_head_ = nullptr;
  // Under queue_mutex_: a wake that came while the writer was not waiting
  // still ends its next wait (the first attach may precede the writer's wait).
  bool wake_pending_ = false;
  Chunk* queue_tail_ = nullptr;

  std::mutex threads_mutex_;
  ThreadBuffer* threads_ = nullptr;

  std::atomic<uint64_t> producer_wait_ns_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> drained_{0};
};

}  // namespace apptracer
