#include "analyzer/timeline/threaded_sink.h"

namespace apptracer {

ThreadedSink::ThreadedSink(TimelineSink& writer) : writer_(writer) {
  for (size_t i = 1; i < kChunks; ++i) free_.push_back(i);
  thread_ = std::thread([this] { write_chunks(); });
}

ThreadedSink::~ThreadedSink() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void ThreadedSink::track(const TimelineTrack& track) {
  Item& item = next();
  item.kind = Item::Kind::Track;
  item.track = track;
}

void ThreadedSink::slice(const TimelineSlice& slice) {
  Item& item = next();
  item.kind = Item::Kind::Slice;
  item.slice = slice;  // into the slot's strings and vectors, as large as the last slice's
}

void ThreadedSink::counter(const TimelineCounter& counter) {
  Item& item = next();
  item.kind = Item::Kind::Counter;
  item.counter = counter;
}

ThreadedSink::Item& ThreadedSink::next() {
  if (chunks_[filling_].used == kItemsPerChunk) hand_over();
  Chunk& chunk = chunks_[filling_];
  return chunk.items[chunk.used++];
}

void ThreadedSink::hand_over() {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.push_back(filling_);
  changed_.notify_all();
  // The writer frees every chunk it is handed, written or (after an error) not.
  changed_.wait(lock, [&] { return !free_.empty(); });
  if (error_) std::rethrow_exception(error_);
  filling_ = free_.back();
  free_.pop_back();
}

void ThreadedSink::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (chunks_[filling_].used > 0) ready_.push_back(filling_);
    last_ = true;
  }
  changed_.notify_all();
  thread_.join();
  if (error_) std::rethrow_exception(error_);
  writer_.finish();
}

void ThreadedSink::write_chunks() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || last_ || !ready_.empty(); });
    if (stop_ || ready_.empty()) return;  // stopped, or the last chunk written
    size_t index = ready_.front();
    ready_.pop_front();
    bool failed = error_ != nullptr;
    lock.unlock();
    Chunk& chunk = chunks_[index];
    std::exception_ptr error;
    if (!failed) {
      try {
        for (size_t i = 0; i < chunk.used; ++i) {
          const Item& item = chunk.items[i];
          switch (item.kind) {
            case Item::Kind::Track: writer_.track(item.track); break;
            case Item::Kind::Slice: writer_.slice(item.slice); break;
            case Item::Kind::Counter: writer_.counter(item.counter); break;
          }
        }
      } catch (...) {
        error = std::current_exception();
      }
    }
    chunk.used = 0;
    lock.lock();
    if (error) error_ = error;
    free_.push_back(index);
    changed_.notify_all();
  }
}

}  // namespace apptracer
