#include "apptracer/insert_thread.h"

#include <new>

#include "apptracer/sqlite.h"

namespace apptracer {

void InsertThread::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!thread_.joinable()) thread_ = std::thread([this] { run_batches(); });
}

void InsertThread::hand_over(Run run, void* owner, unsigned slot) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!thread_.joinable()) thread_ = std::thread([this] { run_batches(); });
    queue_.push_back(Batch{run, owner, slot});
    unfinished_.fetch_add(1, std::memory_order_acq_rel);
  }
  work_.notify_one();
}

void InsertThread::run_batches() {
  if (thread_start_) thread_start_();
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;
    Batch batch = queue_.front();
    queue_.pop_front();
    // After a failure the batches behind it are dropped: the transaction
    // they belong to is rolled back.
    bool write = !failed_.load(std::memory_order_acquire);
    lock.unlock();
    std::string failure;
    try {
      batch.run(batch.owner, batch.slot, write);
    } catch (const std::exception& error) {
      failure = error.what();
    }
    lock.lock();
    if (!failure.empty() && !failed_.load(std::memory_order_relaxed)) {
      failure_ = std::move(failure);
      failed_.store(true, std::memory_order_release);
    }
    unfinished_.fetch_sub(1, std::memory_order_acq_rel);
    batch_done_.notify_all();
  }
  lock.unlock();
  if (thread_end_) thread_end_();
}

void InsertThread::settle_and_throw() {
  // The insert thread never waits for itself: its batches' statements do
  // not enter, and anything else it touched would hang here.
  if (std::this_thread::get_id() == thread_.get_id()) return;
  std::unique_lock<std::mutex> lock(mutex_);
  batch_done_.wait(lock, [this] { return unfinished_.load(std::memory_order_acquire) == 0; });
  if (!failed_.load(std::memory_order_acquire)) return;
  std::string why = std::move(failure_);
  failure_.clear();
  failed_.store(false, std::memory_order_release);
  throw SqliteError(why);
}

bool InsertThread::settle(std::chrono::milliseconds limit) {
  if (unfinished_.load(std::memory_order_acquire) == 0) return true;
  if (std::this_thread::get_id() == thread_.get_id()) return false;
  std::unique_lock<std::mutex> lock(mutex_);
  return batch_done_.wait_for(
      lock, limit, [this] { return unfinished_.load(std::memory_order_acquire) == 0; });
}

void InsertThread::stop() {
  settle();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  stopping_ = false;
}

void InsertThread::forget_in_child() {
  new (&mutex_) std::mutex;
  new (&work_) std::condition_variable;
  new (&batch_done_) std::condition_variable;
  new (&queue_) std::deque<Batch>;
  new (&failure_) std::string;
  new (&thread_) std::thread;
  unfinished_.store(0, std::memory_order_relaxed);
  failed_.store(false, std::memory_order_relaxed);
  stopping_ = false;
}

}  // namespace apptracer
