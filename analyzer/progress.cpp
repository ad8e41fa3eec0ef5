#include "analyzer/progress.h"

#include <unistd.h>

namespace apptracer {

namespace {

constexpr std::chrono::milliseconds kRedrawInterval{200};

}  // namespace

Progress::Progress(std::string task)
    : Progress(std::move(task), stderr, isatty(STDERR_FILENO) != 0, std::chrono::steady_clock::now) {}

Progress::Progress(std::string task, std::FILE* out, bool terminal, Clock now)
    : task_(std::move(task)), out_(out), enabled_(terminal), now_(std::move(now)) {}

Progress::~Progress() { finish(); }

void Progress::phase(const std::string& step) {
  if (!enabled_) return;
  last_draw_ = now_();
  draw(step);
}

void Progress::update(const std::string& step, int64_t done, int64_t total) {
  if (!enabled_) return;
  auto now = now_();
  if (shown_ && done < total && now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  draw(step + " " + std::to_string(done) + "/" + std::to_string(total));
}

void Progress::draw(const std::string& text) {
  shown_ = true;
  std::fprintf(out_, "\r\033[K%s: %s", task_.c_str(), text.c_str());
  std::fflush(out_);
}

void Progress::finish() {
  if (!shown_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  shown_ = false;
}

void show_phase(Progress* progress, const std::string& step) {
  if (progress) progress->phase(step);
}

}  // namespace apptracer
