// Progress of long work on big traces, on stderr, only when stderr is a
// terminal: scripts, pipes and CI logs get clean output. One line, redrawn
// in place and erased at the end, so it never mixes with what a command
// prints.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace apptracer {

class Progress {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // `task` prefixes every line, e.g. "timeline".
  explicit Progress(std::string task);
  // Draws on `out` only when `terminal`, with time from `now`: what the
  // first constructor does with stderr, for tests.
  Progress(std::string task, std::FILE* out, bool terminal, Clock now);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Shows "task: step": a phase of the work, drawn at once (phases are few).
  void phase(const std::string& step);
  // Shows "task: step done/total"; redraws at most every 200 ms, and when done.
  void update(const std::string& step, int64_t done, int64_t total);
  // Erases the line; call it before printing anything else.
  void finish();

 private:
  void draw(const std::string& text);

  std::string task_;
  std::FILE* out_;
  bool enabled_;
  Clock now_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

// A phase on `progress` when there is one: for work whose callers may show
// no progress (tests, commands that show their own).
void show_phase(Progress* progress, const std::string& step);

}  // namespace apptracer
