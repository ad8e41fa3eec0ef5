// The one thread that writes the trace: it drains the record buffers every
// period (or sooner when a chunk fills), one transaction per pass, and opens
// the database lazily, so a process that never uses CUDA leaves no file.
#pragma once

#include <time.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/config.h"
#include "base/self_cost.h"
#include "store/tracer_time_rows.h"
#include "buffer/record_buffers.h"
#include "store/sqlite_gate.h"
#include "store/trace_store.h"

namespace apptracer {

class Writer {
 public:
  // `host`: where host blocks resolve (host/), empty when not watched.
  Writer(RecordBuffers& buffers, AllocationRegistry& registry, StringTable& strings, Config config,
         HostBlockResolution host = {});

  // Asks for GPU activity, never waiting for it: called on the writer thread
  // when rows have waited a pass for their GPU times (forced false: completed
  // records only), and on a fatal signal (forced true: whatever CUPTI holds).
  // What arrives is drained by a later pass. Set before start().
  void set_activity_request(std::function<void(bool forced)> request) {
    request_activity_ = std::move(request);
    activity_wanted_ = false;
  }
  // Runs first on the writer thread (host memory tracking ignores it).
  void set_thread_start(std::function<void()> start) { thread_start_ = std::move(start); }
  // No GPU activity will come (a forked child): rows are stored at once.
  void set_gpu_activity(bool expected) { gpu_activity_expected_ = expected; }

  void start();
  // Final pass, then the trace is marked with `status` and made one file.
  void finish(const std::string& status);

  // From a fatal-signal handler (async-signal-safe): asks the writer for one
  // more pass that marks the trace ended by `signal_number`, waiting at most
  // kSignalWriteLimitMs more than the writer's period; says so on stderr
  // where the end was not written by then.
  void flush_from_signal(int signal_number);

  // Around fork (pthread_atfork, registered after the host allocator's so
  // that this runs first): waits for the writer to leave SQLite, whose
  // global mutexes a child would otherwise inherit locked, then for the
  // batches it handed its insert thread. The writer holds the gate a slice
  // of records at a time, never a whole pass, and hands over only inside
  // it, so the wait is short; false when both were not had within `limit`
  // (the child must then not use SQLite: it is left untraced).
  bool hold_for_fork(std::chrono::milliseconds limit);
  void release_after_fork_in_parent() { sqlite_use_.release_after_fork(); }

  // In a forked child: a new thread and, on first records, a new file.
  void restart_after_fork();

  bool on_writer_thread() const;

  // Create the file on the first pass even if no record has come (by
  // default a process that never uses CUDA leaves no file).
  void create_file_eagerly() { create_eagerly_ = true; }

  // Queued here, written on the next pass.
  void add_device(const DeviceInfo& device);
  void set_meta(const std::string& key, const std::string& value);

  // The file being written, once opened ("" before).
  std::string path() const;

 private:
  void run();
  void pass();
  // Writes the drained records a slice at a time, each under sqlite_use_.
  void write_records();
  // Begins a transaction, waiting for a write lock another connection holds
  // on the trace (a reader's BEGIN IMMEDIATE, an analyzer storing into a live
  // trace) as long as it is held, outside sqlite_use_: the pass's records
  // stay in hand meanwhile, and producers, which the writer then no longer
  // frees, are held only by the buffers' own bound (APPTRACER_STALL_MS), past
  // which they drop and count. Once the program is ending, the wait is
  // bounded by that too: false, the records in hand counted as not written.
  bool begin_transaction();
  // After a failed write: the transaction undone, the pass's records
  // counted as not written, and why, for the trace's end.
  void give_up(const std::string& why);
  // Marks the trace interrupted by `signal_number`, after asking for what
  // CUPTI still holds and draining what arrives in the handler's time.
  void write_signal_end(int signal_number);
  void say_signal_end_unwritten(int signal_number, int limit_ms) const;
  bool open_store_if_needed();
  // How the trace's rows wait for their GPU activity.
  StoreOptions store_options() const;

  RecordBuffers& buffers_;
  AllocationRegistry& registry_;
  StringTable& strings_;
  Config config_;
  HostBlockResolution host_;
  std::function<void(bool)> request_activity_;
  // Asks for activity: wanted by a pass whose rows wait for theirs, made at
  // most every quarter period (the last one made then), and a put-off one
  // as soon as it is due.
  void ask_for_activity_when_due();
  std::chrono::milliseconds until_activity_ask_due() const;
  uint64_t activity_ask_every_ns() const;
  bool activity_wanted_ = false;
  uint64_t activity_requested_ns_ = 0;
  std::function<void()> thread_start_;
  bool gpu_activity_expected_ = true;
  std::thread thread_;
  // What the writer thread and the insert thread used when they ended
  // (--self-cost); the insert thread's summed over its starts.
  self_cost::ThreadUsage thread_usage_, insert_thread_usage_;
  // The tracer's own time, stretch by stretch (tracer_time rows).
  TracerTimeRows tracer_time_{now_ns()};
  void write_tracer_time(bool last);
  std::atomic<bool> stopping_{false};
  std::atomic<int> signal_flush_requested_{0};
  std::atomic<bool> signal_flush_done_{false};
  std::atomic<bool> failed_{false};
  // Set when the program is ending: how long a lock on the trace is waited for.
  std::atomic<uint64_t> lock_deadline_ns_{0};
  // What could not be written, and why (written into meta at the end).
  uint64_t records_not_written_ = 0;
  std::string gave_up_;
  uint64_t lock_wait_ns_ = 0;  // time spent waiting for another process's lock
  // pass_records_ holds records a pass could not write (the trace was locked),
  // drained from hand_drain_start_ on.
  bool records_in_hand_ = false;
  uint64_t hand_drain_start_ = 0;
  std::atomic<bool> create_eagerly_{false};

  // Held while the writer is inside SQLite (see hold_for_fork).
  SqliteGate sqlite_use_;
  // Runs the store's full batches of rows while the writer builds the next
  // (a thread named apptracer-sql). Declared before store_, which uses it.
  InsertThread insert_thread_;
  mutable std::mutex pending_mutex_;
  std::vector<DeviceInfo> pending_devices_;
  std::map<std::string, std::string> pending_meta_;
  std::string path_;

  std::unique_ptr<TraceStore> store_;
  std::vector<Record> pass_records_;  // reused between passes
  // When the last passes began draining: a row waits the join's hold and
  // late passes for its activity, and its hold's time (StoreOptions), and
  // may resolve a touch until then.
  static constexpr size_t kPassesAFreedBlockIsKept = static_cast<size_t>(
      StoreOptions{}.activity.hold_passes + StoreOptions{}.activity.late_passes + 2);
  std::deque<uint64_t> pass_starts_;
  // A forked child's trace is not opened by the writer thread before this.
  static constexpr uint64_t kForkedChildOpenDelayNs = 100'000'000;
  uint64_t open_not_before_ns_ = 0;
};

}  // namespace apptracer
