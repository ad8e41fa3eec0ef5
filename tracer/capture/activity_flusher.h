// Asks CUPTI for the activity it holds, on a thread of its own, so that the
// writer never waits for CUPTI.
//
// CUPTI hands completed buffers over on its own worker thread while holding
// its activity lock, and turning them into records may wait for the writer to
// free record memory. A writer that flushed CUPTI itself then waited for that
// lock while the worker waited for the writer: a GPT-2-style training run hung
// for good after about 200 steps. Here the writer only asks; this thread
// flushes, and whatever it waits for, the writer keeps draining.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace apptracer {

class ActivityFlusher {
 public:
  // `flush(forced)` asks CUPTI for its records; `thread_start` runs first on
  // the new thread (host memory tracking ignores it).
  ActivityFlusher(std::function<void(bool forced)> flush, std::function<void()> thread_start);
  // Waits for the thread: only tests destroy a flusher (the tracer keeps its
  // own for the life of the process).
  ~ActivityFlusher();
  ActivityFlusher(const ActivityFlusher&) = delete;
  ActivityFlusher& operator=(const ActivityFlusher&) = delete;

  // Starts the thread (every signal but faults blocked on it).
  void start();
  // Never blocks: the next flush is forced if any request since the last
  // one was.
  void request(bool forced);
  // Lets the thread end once it is idle; never waits for it (it may be
  // inside CUPTI, which finish() flushes on its own).
  void stop();
  // In a forked child: the thread does not exist there; nothing is asked.
  void forget_after_fork();

 private:
  void run();

  std::function<void(bool)> flush_;
  std::function<void()> thread_start_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool running_ = false;
  bool stopping_ = false;
  bool pending_ = false;
  bool pending_forced_ = false;
};

}  // namespace apptracer
