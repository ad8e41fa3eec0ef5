// The progress line: drawn only on a terminal, redrawn at most every 200 ms
// while counting, always for a phase or the last count, and erased at the end.
#include "analyzer/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace apptracer {
namespace {

using namespace std::chrono_literals;

// What a Progress wrote, read back from an in-memory stream.
class Captured {
 public:
  Captured() : out_(open_memstream(&buffer_, &size_)) {}
  ~Captured() {
    std::fclose(out_);
    std::free(buffer_);
  }
  std::FILE* stream() { return out_; }
  std::string text() {
    std::fflush(out_);
    return std::string(buffer_, size_);
  }

 private:
  char* buffer_ = nullptr;
  size_t size_ = 0;
  std::FILE* out_;
};

struct FakeClock {
  std::chrono::steady_clock::time_point now{};
  Progress::Clock clock() {
    return [this] { return now; };
  }
};

const std::string kErase = "\r\033[K";

TEST(Progress, DrawsCountsAndPhasesOnOneLineAndErasesIt) {
  Captured out;
  FakeClock time;
  {
    Progress progress("dvdg", out.stream(), true, time.clock());
    progress.phase("reading the trace");
    time.now += 1s;
    progress.update("rows", 5, 10);
    progress.finish();
  }
  EXPECT_EQ(out.text(), kErase + "dvdg: reading the trace" + kErase + "dvdg: rows 5/10" + kErase);
}

TEST(Progress, CountsRedrawAtMostEvery200ms) {
  Captured out;
  FakeClock time;
  Progress progress("stats", out.stream(), true, time.clock());
  progress.update("kernels", 1, 10);
  time.now += 199ms;
  progress.update("kernels", 2, 10);  // too soon: not drawn
  time.now += 1ms;
  progress.update("kernels", 3, 10);
  progress.update("kernels", 10, 10);  // the last count is always drawn
  EXPECT_EQ(out.text(),
            kErase + "stats: kernels 1/10" + kErase + "stats: kernels 3/10" + kErase + "stats: kernels 10/10");
}

TEST(Progress, PhasesAreDrawnAtOnce) {
  Captured out;
  FakeClock time;
  Progress progress("report", out.stream(), true, time.clock());
  progress.update("slices", 1, 10);
  progress.phase("rules");  // at the same instant: a phase is never held back
  EXPECT_EQ(out.text(), kErase + "report: slices 1/10" + kErase + "report: rules");
}

TEST(Progress, WritesNothingWhenNotOnATerminal) {
  Captured out;
  FakeClock time;
  {
    Progress progress("diagnose", out.stream(), false, time.clock());
    progress.phase("rules");
    progress.update("rows", 10, 10);
  }
  EXPECT_EQ(out.text(), "");
}

TEST(Progress, ErasesNothingItDidNotDraw) {
  Captured out;
  FakeClock time;
  { Progress progress("merge", out.stream(), true, time.clock()); }
  EXPECT_EQ(out.text(), "");
}

}  // namespace
}  // namespace apptracer
