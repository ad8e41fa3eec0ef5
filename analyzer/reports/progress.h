// Progress of long work on big traces, on stderr, only when stderr is a
// terminal: scripts and CI logs get clean output.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace apptracer {

class Progress {
 public:
  // `task` prefixes every line, e.g. "timeline".
  explicit Progress(std::string task);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Shows "task: step done/total"; redraws at most a few times a second.
  void update(const std::string& step, int64_t done, int64_t total);
  // Erases the line.
  void finish();

 private:
  std::string task_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace apptracer
