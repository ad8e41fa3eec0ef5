// A timeline writer on a thread of its own: the reader makes each slice and
// this hands it to the writer (Perfetto's encoding and the file's writes, a
// third of a training trace's timeline), which runs beside the reading.
//
// Items pass in chunks that are reused in place: the reader copies each
// slice into a slot whose strings and vectors keep their capacity, so after
// the first chunks it allocates nothing, and nothing made on one thread is
// freed on the other (glibc's per-thread caches then serve both; slices made
// and freed across threads cost more in malloc than the writer's thread saved).
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "analyzer/timeline/timeline.h"

namespace apptracer {

class ThreadedSink : public TimelineSink {
 public:
  explicit ThreadedSink(TimelineSink& writer);
  // Without finish(): what was handed over is dropped (the output is
  // incomplete; the command failed).
  ~ThreadedSink() override;
  ThreadedSink(const ThreadedSink&) = delete;
  ThreadedSink& operator=(const ThreadedSink&) = delete;

  // The source comes first, before anything is queued: written here.
  void source(const TimelineSource& source) override { writer_.source(source); }
  void track(const TimelineTrack& track) override;
  void slice(const TimelineSlice& slice) override;
  void counter(const TimelineCounter& counter) override;
  // Hands over the rest, waits for the writer to write it and finish; the
  // writer's error, if it had one, is thrown here.
  void finish() override;

 private:
  static constexpr size_t kChunks = 8;
  static constexpr size_t kItemsPerChunk = 1024;

  struct Item {
    enum class Kind { Track, Slice, Counter } kind = Kind::Slice;
    TimelineTrack track;
    TimelineSlice slice;
    TimelineCounter counter;
  };
  struct Chunk {
    std::vector<Item> items = std::vector<Item>(kItemsPerChunk);
    size_t used = 0;
  };

  // The reader's next slot, the chunk handed over first where it is full.
  Item& next();
  // Queues the reader's chunk for the writer and takes a free one.
  void hand_over();
  void write_chunks();

  TimelineSink& writer_;
  std::vector<Chunk> chunks_ = std::vector<Chunk>(kChunks);
  size_t filling_ = 0;           // the reader's chunk
  std::deque<size_t> ready_;     // for the writer, in order
  std::vector<size_t> free_;
  bool last_ = false;            // no chunk follows those ready
  bool stop_ = false;            // drop what is ready and end
  std::exception_ptr error_;     // the writer's
  std::mutex mutex_;
  std::condition_variable changed_;
  std::thread thread_;
};

}  // namespace apptracer
