// Who may be inside SQLite: the writer, a slice of work at a time, or a
// thread about to fork (pthread_atfork), which must never copy SQLite's
// global locks into the child while the writer holds them.
//
// A fork waits at most for the slice in progress: the writer, between
// slices, steps aside while a fork is waiting (a plain mutex let it take
// the lock again before the forking thread woke, slice after slice).
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace apptracer {

class SqliteGate {
 public:
  // The writer, around each slice of SQLite work.
  void lock() {
    while (forks_waiting_.load(std::memory_order_acquire) > 0) std::this_thread::yield();
    mutex_.lock();
  }
  void unlock() { mutex_.unlock(); }

  // The forking thread: false when the writer kept it past `limit`.
  bool hold_for_fork(std::chrono::milliseconds limit) {
    forks_waiting_.fetch_add(1, std::memory_order_acq_rel);
    bool held = mutex_.try_lock_for(limit);
    forks_waiting_.fetch_sub(1, std::memory_order_acq_rel);
    return held;
  }
  void release_after_fork() { mutex_.unlock(); }

  // In the child: the forking thread held it; nobody waits.
  void reset_in_child() {
    new (&mutex_) std::timed_mutex;
    forks_waiting_.store(0, std::memory_order_relaxed);
  }

 private:
  std::timed_mutex mutex_;
  std::atomic<int> forks_waiting_{0};
};

}  // namespace apptracer
