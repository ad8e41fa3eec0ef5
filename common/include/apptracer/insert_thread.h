// Runs full batches of INSERTs (BatchInserter) on a thread of its own, in
// the order they were handed over, while the thread that builds rows goes on
// building the next ones: SQLite's half of writing a trace and the building
// of its rows then take two cores instead of one.
//
// A connection is opened without SQLite's mutexes and must never be used by
// two threads at once. So every other use of a connection that has an
// insert thread (a statement's bind, step, read or finalize, a prepare, an
// exec) first waits until the batches handed over have run; Database and
// Statement do that themselves (enter()), and the rows read as if one thread
// had written them in order. The batch statements are the insert thread's
// alone and skip the wait.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace apptracer {

class InsertThread {
 public:
  // Runs a batch, `owner`'s slot `slot`, or only gives the slot back
  // (`write` false: an earlier batch failed). Throws SqliteError on failure.
  using Run = void (*)(void* owner, unsigned slot, bool write);

  // `thread_start` runs first on the new thread (its name, its signal
  // mask), `thread_end` last (what it used).
  explicit InsertThread(std::function<void()> thread_start = {},
                        std::function<void()> thread_end = {})
      : thread_start_(std::move(thread_start)), thread_end_(std::move(thread_end)) {}
  ~InsertThread() { stop(); }
  InsertThread(const InsertThread&) = delete;
  InsertThread& operator=(const InsertThread&) = delete;

  // Starts the thread now, not at the first batch: a thread started in
  // the middle of a write may wait for the dynamic loader's lock (see
  // tracer/store/writer.cpp).
  void start();
  // Queues a batch, starting the thread the first time.
  void hand_over(Run run, void* owner, unsigned slot);

  // Waits until `done()` holds, checked after each batch that runs.
  template <typename Done>
  void wait_until(Done done) {
    std::unique_lock<std::mutex> lock(mutex_);
    batch_done_.wait(lock, [&] { return done(); });
  }

  // Before any use of the connection but a batch: waits until every batch
  // handed over has run, then throws the first one's failure, once.
  void enter() {
    if (unfinished_.load(std::memory_order_acquire) != 0 ||
        failed_.load(std::memory_order_acquire)) {
      settle_and_throw();
    }
  }
  // Waits for the batches handed over, at most `limit`, without throwing
  // (destructors, a fork): false when they had not all run by then.
  bool settle(std::chrono::milliseconds limit = std::chrono::hours(24));

  // Settles and ends the thread; a later batch starts it again.
  void stop();
  // In a forked child: the thread did not come along, and what was queued
  // was the parent's. Nothing of it is read or freed.
  void forget_in_child();

 private:
  struct Batch {
    Run run;
    void* owner;
    unsigned slot;
  };

  void settle_and_throw();
  void run_batches();

  std::function<void()> thread_start_, thread_end_;
  std::mutex mutex_;
  std::condition_variable work_, batch_done_;
  std::deque<Batch> queue_;
  // Handed over and not yet run (or dropped after a failure).
  std::atomic<size_t> unfinished_{0};
  std::atomic<bool> failed_{false};
  std::string failure_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace apptracer
