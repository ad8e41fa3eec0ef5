// The one thread that writes the trace: it drains the record buffers every
// period (or sooner when a chunk fills), one transaction per pass, and opens
// the database lazily, so a process that never uses CUDA leaves no file.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config.h"
#include "record_buffers.h"
#include "trace_store.h"

namespace apptracer {

class Writer {
 public:
  Writer(RecordBuffers& buffers, AllocationRegistry& registry, Config config);

  void start();
  // Final pass, then the trace is marked with `status` and made one file.
  void finish(const std::string& status);

  // From a fatal-signal handler (async-signal-safe): asks the writer for one
  // more pass marked with `reason`, waiting at most about a second.
  void flush_from_signal(int signal_number);

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
  bool open_store_if_needed();

  RecordBuffers& buffers_;
  AllocationRegistry& registry_;
  Config config_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> signal_flush_requested_{0};
  std::atomic<bool> signal_flush_done_{false};
  std::atomic<bool> failed_{false};
  std::atomic<bool> create_eagerly_{false};

  mutable std::mutex pending_mutex_;
  std::vector<DeviceInfo> pending_devices_;
  std::map<std::string, std::string> pending_meta_;
  std::string path_;

  std::unique_ptr<TraceStore> store_;
  std::vector<Record> pass_records_;  // reused between passes
};

}  // namespace apptracer
