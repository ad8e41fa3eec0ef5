// The timeline of the sample trace: its model, the Perfetto file decoded back
// with our own proto, and the Chrome JSON parsed back.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "chrome_json_writer.h"
#include "perfetto_trace.pb.h"
#include "perfetto_writer.h"
#include "sample_trace.h"
#include "timeline.h"

namespace apptracer::testing {
namespace {

namespace pb = ::apptracer::perfetto;

class TimelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ids_ = build_sample_trace(builder_);
    add_sample_dvdg(builder_.db(), ids_);
    Progress quiet("test");
    trace::Trace model(builder_.db());
    timeline_ = build_timeline(model, quiet);
  }

  const TimelineSlice* slice_named(const std::string& name) const {
    for (const TimelineSlice& slice : timeline_.slices) {
      if (timeline_.name_of(slice) == name) return &slice;
    }
    return nullptr;
  }

  TraceBuilder builder_;
  SampleIds ids_;
  Timeline timeline_;
};

TEST_F(TimelineTest, HasATrackPerProcessThreadNvtxThreadAndStream) {
  ASSERT_EQ(timeline_.tracks.size(), kSampleTracks);
  std::multiset<std::string> names;
  for (const TimelineTrack& track : timeline_.tracks) names.insert(track.name);
  EXPECT_EQ(names, (std::multiset<std::string>{"vector_add", "main 100", "worker 101",
                                               "NVTX main 100", "NVTX worker 101",
                                               "GPU 0 stream 7", "GPU 0 stream 8",
                                               "GPU 0 stream 9"}));
  EXPECT_EQ(timeline_.tracks[0].kind, TimelineTrack::Kind::Process);
  EXPECT_EQ(timeline_.tracks[0].pid, 4242);
  for (const TimelineTrack& track : timeline_.tracks) {
    if (track.kind != TimelineTrack::Kind::Process) {
      EXPECT_EQ(track.parent_uuid, timeline_.tracks[0].uuid);
    }
  }
}

TEST_F(TimelineTest, HasASliceForEveryCallTimedGpuOperationAndRange) {
  EXPECT_EQ(timeline_.slices.size(), kSampleSlices);
  std::map<std::string, int> by_category;
  for (const TimelineSlice& slice : timeline_.slices) ++by_category[std::string(slice.category)];
  EXPECT_EQ(by_category["cuda_api"], 12);
  EXPECT_EQ(by_category["kernel"], 4);  // the lost launch has no GPU times
  EXPECT_EQ(by_category["memcpy"], 2);
  EXPECT_EQ(by_category["memset"], 2);
  EXPECT_EQ(by_category["nvtx"], 3);
  // An NVTX range never closed runs to the trace's last event (memset at 6100).
  const TimelineSlice* unclosed = slice_named("unclosed");
  ASSERT_NE(unclosed, nullptr);
  EXPECT_EQ(unclosed->end_ns, 6100);
}

TEST_F(TimelineTest, KernelSlicesNameTheAllocationsTheyUse) {
  const TimelineSlice* kernel = nullptr;
  for (const TimelineSlice& slice : timeline_.slices) {
    if (slice.category == "kernel" && slice.start_ns == 3300) kernel = &slice;
  }
  ASSERT_NE(kernel, nullptr);
  std::map<std::string, Cell> args;
  for (const TimelineArg& arg : kernel->args) args[std::string(arg.name)] = arg.value;
  EXPECT_EQ(std::get<std::string>(args["allocations"]), "#1 device 1000 B r; #2 device 3000 B rw");
  EXPECT_EQ(std::get<std::string>(args["grid"]), "4,1,1");
  EXPECT_EQ(std::get<int64_t>(args["correlation_id"]), 4);
}

TEST_F(TimelineTest, ARuntimeCallSlicesNamesTheDriverCallFoldedIntoIt) {
  std::map<int64_t, std::map<std::string, Cell>> launch_args;
  for (const TimelineSlice& slice : timeline_.slices) {
    if (timeline_.name_of(slice) != "cudaLaunchKernel") continue;
    for (const TimelineArg& arg : slice.args) launch_args[slice.start_ns][std::string(arg.name)] = arg.value;
  }
  ASSERT_EQ(launch_args.count(3500), 1u);
  EXPECT_EQ(std::get<std::string>(launch_args[3500]["driver_call"]), "cuLaunchKernel");
  EXPECT_EQ(launch_args[3100].count("driver_call"), 0u) << "its driver call has its own slice";
}

TEST_F(TimelineTest, FlowsGoFromCallsToTheirGpuWorkAndAlongDataEdges) {
  EXPECT_EQ(timeline_.api_flow_count, kSampleApiFlows);
  EXPECT_EQ(timeline_.dvdg_flow_count, kSampleDvdgFlows);
  EXPECT_EQ(timeline_.flow_count, kSampleApiFlows + kSampleDvdgFlows);
  const TimelineSlice* launch = nullptr;
  for (const TimelineSlice& slice : timeline_.slices) {
    if (timeline_.name_of(slice) == "cudaLaunchKernel" && slice.start_ns == 3100) launch = &slice;
  }
  ASSERT_NE(launch, nullptr);
  ASSERT_EQ(launch->flows_out.size(), 1u);
  const TimelineSlice* kernel = nullptr;
  for (const TimelineSlice& slice : timeline_.slices) {
    for (uint64_t flow : slice.flows_in) {
      if (flow == launch->flows_out[0]) kernel = &slice;
    }
  }
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(timeline_.name_of(*kernel), "vec_add(float*, float*)");
  EXPECT_EQ(kernel->start_ns, 3300);
  // The kernel ends the launch's flow and the HtoD copy's data flow, and
  // starts the data flow into the DtoH copy.
  EXPECT_EQ(kernel->flows_in.size(), 2u);
  EXPECT_EQ(kernel->flows_out.size(), 1u);
}

TEST_F(TimelineTest, WithoutDvdgTablesOnlyCallFlowsAreDrawn) {
  TraceBuilder plain;
  build_sample_trace(plain);
  Progress quiet("test");
  trace::Trace model(plain.db());
  Timeline timeline = build_timeline(model, quiet);
  EXPECT_EQ(timeline.flow_count, kSampleApiFlows);
  EXPECT_EQ(timeline.dvdg_flow_count, 0u);
}

TEST_F(TimelineTest, PerfettoFileDecodesWithOurProto) {
  std::ostringstream out;
  write_perfetto_trace(out, timeline_);
  pb::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(out.str()));

  std::set<uint64_t> track_uuids;
  size_t processes = 0, threads = 0, begins = 0, ends = 0;
  std::map<uint64_t, int> open_per_track;
  std::map<uint64_t, int> flow_starts, flow_ends;
  uint64_t last_timestamp = 0;
  for (const pb::TracePacket& packet : trace.packet()) {
    EXPECT_EQ(packet.trusted_packet_sequence_id(), 1u);
    if (packet.has_track_descriptor()) {
      const pb::TrackDescriptor& track = packet.track_descriptor();
      EXPECT_TRUE(track_uuids.insert(track.uuid()).second);
      processes += track.has_process();
      threads += track.has_thread();
      continue;
    }
    ASSERT_TRUE(packet.has_track_event());
    EXPECT_GE(packet.timestamp(), last_timestamp);  // sorted by time
    last_timestamp = packet.timestamp();
    const pb::TrackEvent& event = packet.track_event();
    EXPECT_TRUE(track_uuids.count(event.track_uuid()));
    if (event.type() == pb::TrackEvent::TYPE_SLICE_BEGIN) {
      ++begins;
      ++open_per_track[event.track_uuid()];
      EXPECT_FALSE(event.name().empty());
      for (uint64_t flow : event.flow_ids()) ++flow_starts[flow];
      for (uint64_t flow : event.terminating_flow_ids()) ++flow_ends[flow];
    } else {
      ASSERT_EQ(event.type(), pb::TrackEvent::TYPE_SLICE_END);
      ++ends;
      EXPECT_GT(open_per_track[event.track_uuid()]--, 0);  // never ends more than began
    }
  }
  EXPECT_EQ(track_uuids.size(), kSampleTracks);
  EXPECT_EQ(processes, 1u);
  EXPECT_EQ(threads, 2u);
  EXPECT_EQ(begins, kSampleSlices);
  EXPECT_EQ(ends, kSampleSlices);
  for (const auto& [track, open] : open_per_track) EXPECT_EQ(open, 0) << track;
  // Each flow starts once and ends once.
  EXPECT_EQ(flow_starts.size(), kSampleApiFlows + kSampleDvdgFlows);
  EXPECT_EQ(flow_starts.size(), flow_ends.size());
  for (const auto& [flow, count] : flow_starts) {
    EXPECT_EQ(count, 1);
    EXPECT_EQ(flow_ends[flow], 1);
  }
}

TEST_F(TimelineTest, OverlappingRecordsOnOneStreamAreClippedToNest) {
  std::ostringstream out;
  write_perfetto_trace(out, timeline_);
  pb::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(out.str()));
  uint64_t stream9 = 0;
  for (const TimelineTrack& track : timeline_.tracks) {
    if (track.name == "GPU 0 stream 9") stream9 = track.uuid;
  }
  std::vector<std::pair<uint64_t, bool>> events;  // (timestamp, begin)
  for (const pb::TracePacket& packet : trace.packet()) {
    if (packet.has_track_event() && packet.track_event().track_uuid() == stream9) {
      events.emplace_back(packet.timestamp(),
                          packet.track_event().type() == pb::TrackEvent::TYPE_SLICE_BEGIN);
    }
  }
  // [100,300] and [200,400]: the second is clipped to [200,300] inside the first.
  std::vector<std::pair<uint64_t, bool>> expected = {{100, true}, {200, true}, {300, false}, {300, false}};
  EXPECT_EQ(events, expected);
}

TEST_F(TimelineTest, ChromeJsonHasSlicesTrackNamesAndFlowPairs) {
  std::ostringstream out;
  write_chrome_json(out, timeline_);
  nlohmann::json document = nlohmann::json::parse(out.str());
  // The first event (overlap kernel at 100 ns) is time zero.
  EXPECT_EQ(document["otherData"]["origin_ns"], 100);
  std::map<std::string, int> phases;
  std::set<std::string> thread_names;
  std::map<uint64_t, int> starts, finishes;
  for (const nlohmann::json& event : document["traceEvents"]) {
    std::string phase = event["ph"];
    ++phases[phase];
    if (phase == "M" && event["name"] == "thread_name") thread_names.insert(event["args"]["name"]);
    if (phase == "s") ++starts[event["id"].get<uint64_t>()];
    if (phase == "f") {
      ++finishes[event["id"].get<uint64_t>()];
      EXPECT_EQ(event["bp"], "e");
    }
    if (phase == "X" && event["name"] == "cudaMemcpy" && event["ts"] == 1.9) {
      EXPECT_DOUBLE_EQ(event["dur"].get<double>(), 1.0);  // 2000..3000 ns, origin 100
      EXPECT_EQ(event["tid"], 100);
    }
  }
  EXPECT_EQ(phases["X"], static_cast<int>(kSampleSlices));
  EXPECT_EQ(phases["M"], static_cast<int>(kSampleTracks));
  EXPECT_EQ(phases["s"], static_cast<int>(kSampleApiFlows + kSampleDvdgFlows));
  EXPECT_EQ(phases["f"], static_cast<int>(kSampleApiFlows + kSampleDvdgFlows));
  EXPECT_EQ(starts.size(), finishes.size());
  EXPECT_TRUE(thread_names.count("GPU 0 stream 7"));
  EXPECT_TRUE(thread_names.count("main 100"));
}

}  // namespace
}  // namespace apptracer::testing
