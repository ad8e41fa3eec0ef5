#include "capture/activity_flusher.h"

#include <pthread.h>

#include <new>

#include "base/signal_sets.h"

namespace apptracer {

ActivityFlusher::ActivityFlusher(std::function<void(bool forced)> flush,
                                 std::function<void()> thread_start)
    : flush_(std::move(flush)), thread_start_(std::move(thread_start)) {}

void ActivityFlusher::start() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (running_) return;
    running_ = true;
    stopping_ = false;
  }
  // As the writer: a signal sent to the process goes to a program thread.
  SignalsBlocked blocked(all_but_faults());
  thread_ = std::thread([this] { run(); });
}

ActivityFlusher::~ActivityFlusher() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void ActivityFlusher::run() {
  pthread_setname_np(pthread_self(), "apptracer-flush");
  if (thread_start_) thread_start_();
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return pending_ || stopping_; });
    if (stopping_) break;
    bool forced = pending_forced_;
    pending_ = pending_forced_ = false;
    lock.unlock();
    flush_(forced);
    lock.lock();
  }
  running_ = false;
}

void ActivityFlusher::request(bool forced) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!running_ || stopping_) return;
  pending_ = true;
  pending_forced_ = pending_forced_ || forced;
  wake_.notify_one();
}

void ActivityFlusher::stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  stopping_ = true;
  wake_.notify_one();
}

void ActivityFlusher::forget_after_fork() {
  // Held, perhaps, by the parent's thread, which is not here.
  new (&thread_) std::thread;
  new (&mutex_) std::mutex;
  new (&wake_) std::condition_variable;
  running_ = false;
  stopping_ = true;
  pending_ = pending_forced_ = false;
}

}  // namespace apptracer
