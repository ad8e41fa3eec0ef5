// The tracer's own time on the program's threads (tracer_time rows): the
// sampled estimate of each stretch, between the calls and in them, and the
// share of a stretch a window overlaps.
#include <gtest/gtest.h>

#include "analyzer/trace/trace.h"
#include "trace_builder.h"

namespace apptracer::trace {
namespace {

// Two stretches; the hooks' sites add up between the calls, the CUDA
// callbacks' in them, the writer's (its own thread) in neither; a clock read
// of 10 ns comes off each timed call before it is scaled by sample_every.
TEST(TracerTime, EstimatesEachStretchFromItsSampledHooks) {
  testing::TraceBuilder builder;
  builder.add_tracer_time(0, 1'000'000, TracerSite::HostAllocate, 10, 1'100, 32);
  builder.add_tracer_time(0, 1'000'000, TracerSite::FrameworkRange, 2, 520, 32);
  builder.add_tracer_time(0, 1'000'000, TracerSite::ApiCallback, 50, 90'000, 32);
  builder.add_tracer_time(0, 1'000'000, TracerSite::WriterLaunches, 50, 90'000, 32);
  builder.add_tracer_time(1'000'000, 3'000'000, TracerSite::FrameworkAllocator, 4, 2'040, 1);
  builder.set_meta("tracer_time_clock_ns", "10");
  Trace trace(builder.db());
  const TracerTime& time = trace.tracer_time();
  const std::vector<TracerTime::Stretch>& stretches = time.stretches(kSingleProcess);
  ASSERT_EQ(stretches.size(), 2u);
  EXPECT_EQ(stretches[0].between_ns, (1'000 + 500) * 32);
  EXPECT_EQ(stretches[0].in_calls_ns, (90'000 - 500) * 32);
  EXPECT_EQ(stretches[1].between_ns, 2'000);
  EXPECT_EQ(stretches[1].in_calls_ns, 0);
  // Half the first stretch and a quarter of the second.
  EXPECT_EQ(time.between_calls_ns(kSingleProcess, 500'000, 1'500'000), 24'000 + 500);
  EXPECT_EQ(time.between_calls_ns(kSingleProcess, 3'000'000, 4'000'000), 0);
  EXPECT_EQ(time.in_calls_ns(kSingleProcess, 0, 500'000), (90'000 - 500) * 32 / 2);
  EXPECT_EQ(time.between_calls_ns(kSingleProcess + 1, 0, 4'000'000), 0);
}

// A trace recorded before the table existed has no tracer time.
TEST(TracerTime, NoneWithoutTheTable) {
  testing::TraceBuilder builder;
  builder.db().exec("DROP TABLE tracer_time");
  Trace trace(builder.db());
  EXPECT_TRUE(trace.tracer_time().empty());
  EXPECT_EQ(trace.tracer_time().between_calls_ns(kSingleProcess, 0, 1'000'000'000), 0);
}

}  // namespace
}  // namespace apptracer::trace
