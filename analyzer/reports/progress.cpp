#include "progress.h"

#include <unistd.h>

#include <cstdio>

namespace apptracer {

Progress::Progress(std::string task) : task_(std::move(task)), enabled_(isatty(STDERR_FILENO)) {}

Progress::~Progress() { finish(); }

void Progress::update(const std::string& step, int64_t done, int64_t total) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (shown_ && done < total && now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  shown_ = true;
  std::fprintf(stderr, "\r\033[K%s: %s %lld/%lld", task_.c_str(), step.c_str(),
               static_cast<long long>(done), static_cast<long long>(total));
  std::fflush(stderr);
}

void Progress::finish() {
  if (!shown_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace apptracer
