// The timeline's writer thread: what it writes is what it was handed, in
// order, across many chunks; a writer's error reaches the reader; a stopped
// run ends without waiting for a writer that is not told to finish.
#include "analyzer/timeline/threaded_sink.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace apptracer {
namespace {

// Writes each thing it is handed as a line; throws at slice `fail_at`.
class Lines : public TimelineSink {
 public:
  explicit Lines(size_t fail_at = SIZE_MAX) : fail_at_(fail_at) {}
  void source(const TimelineSource&) override { lines.push_back("source"); }
  void track(const TimelineTrack& track) override { lines.push_back("track " + track.name); }
  void slice(const TimelineSlice& slice) override {
    if (slices_++ == fail_at_) throw std::runtime_error("disk full");
    std::string line = "slice " + std::to_string(slice.track) + " " + slice.name + " " +
                       std::to_string(slice.start_ns) + "-" + std::to_string(slice.end_ns);
    for (const TimelineArg& arg : slice.args) {
      line += " " + std::string(arg.name) + "=";
      if (const auto* text = std::get_if<std::string>(&arg.value)) line += *text;
      if (const auto* number = std::get_if<int64_t>(&arg.value)) line += std::to_string(*number);
    }
    for (uint64_t flow : slice.flows_out) line += " out" + std::to_string(flow);
    lines.push_back(line);
  }
  void counter(const TimelineCounter& counter) override {
    lines.push_back("counter " + std::to_string(counter.track) + " " + std::to_string(counter.value));
  }
  void finish() override { lines.push_back("finish"); }

  std::vector<std::string> lines;

 private:
  size_t fail_at_;
  size_t slices_ = 0;
};

// Slices whose arguments change kind and length from one to the next, as a
// kernel's, a copy's and a call's do: each slot is reused for all of them.
void hand(TimelineSink& sink, int slices) {
  sink.source(TimelineSource{});
  TimelineTrack track;
  track.name = "stream 7";
  sink.track(track);
  TimelineSlice slice;
  for (int i = 0; i < slices; ++i) {
    slice.track = static_cast<size_t>(i % 3);
    slice.name = i % 2 ? "kernel " + std::string(static_cast<size_t>(i % 50), 'k') : "cudaMemcpyAsync";
    slice.start_ns = i;
    slice.end_ns = i + 1;
    slice.args.clear();
    if (i % 3 == 0) slice.args.push_back({"bytes", int64_t{i}});
    if (i % 4 == 0) slice.args.push_back({"kind", std::string(static_cast<size_t>(i % 40), 'x')});
    slice.flows_out.assign(static_cast<size_t>(i % 2), static_cast<uint64_t>(i));
    sink.slice(slice);
    if (i % 1000 == 0) sink.counter({1, i, i * 2});
  }
  sink.finish();
}

TEST(ThreadedSink, WritesWhatItIsHandedInOrder) {
  Lines direct, threaded_lines;
  hand(direct, 20'000);  // about twenty chunks
  {
    ThreadedSink threaded(threaded_lines);
    hand(threaded, 20'000);
  }
  EXPECT_EQ(threaded_lines.lines.size(), direct.lines.size());
  EXPECT_EQ(threaded_lines.lines, direct.lines);
  EXPECT_EQ(threaded_lines.lines.back(), "finish");
}

TEST(ThreadedSink, AWritersErrorReachesTheReader) {
  Lines failing(5'000);
  ThreadedSink threaded(failing);
  EXPECT_THROW(hand(threaded, 20'000), std::runtime_error);
  EXPECT_TRUE(failing.lines.empty() || failing.lines.back() != "finish");
}

TEST(ThreadedSink, AnErrorInTheLastChunkIsThrownByFinish) {
  Lines failing(10);
  ThreadedSink threaded(failing);
  EXPECT_THROW(hand(threaded, 100), std::runtime_error);
}

TEST(ThreadedSink, DroppedWithoutFinishItEnds) {
  Lines lines;
  {
    ThreadedSink threaded(lines);
    TimelineSlice slice;
    for (int i = 0; i < 50'000; ++i) threaded.slice(slice);
  }  // the reader failed elsewhere: nothing waits for a finish
  EXPECT_TRUE(lines.lines.empty() || lines.lines.back() != "finish");
}

}  // namespace
}  // namespace apptracer
