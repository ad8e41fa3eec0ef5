// The timeline of the sample trace: its model, the Perfetto file decoded back
// with our own proto, and the Chrome JSON parsed back.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "analyzer/timeline/chrome_json_writer.h"
#include "perfetto_trace.pb.h"
#include "analyzer/timeline/perfetto_writer.h"
#include "sample_trace.h"
#include "analyzer/timeline/timeline.h"

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
                                               "GPU 0 stream 9", "GPU 0 memory allocated"}));
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
  // Kineto's categories.
  EXPECT_EQ(by_category["cuda_runtime"], 11);
  EXPECT_EQ(by_category["cuda_driver"], 1);
  EXPECT_EQ(by_category["kernel"], 4);  // the lost launch has no GPU times
  EXPECT_EQ(by_category["gpu_memcpy"], 2);
  EXPECT_EQ(by_category["gpu_memset"], 2);
  EXPECT_EQ(by_category["user_annotation"], 3);
  EXPECT_EQ(by_category["gpu_user_annotation"], 3);
  // An NVTX range never closed runs to the trace's last event (memset at 6100).
  const TimelineSlice* unclosed = slice_named("unclosed");
  ASSERT_NE(unclosed, nullptr);
  EXPECT_EQ(unclosed->end_ns, 6100);
}

// Each NVTX range on each stream that ran work its thread issued inside it,
// from the first such work's start to the last one's end.
TEST_F(TimelineTest, NvtxRangesAreDrawnOnTheStreamsOfTheirGpuWork) {
  std::set<std::tuple<std::string, std::string, int64_t, int64_t>> annotations;
  for (const TimelineSlice& slice : timeline_.slices) {
    if (slice.category != "gpu_user_annotation") continue;
    annotations.emplace(slice.name, timeline_.tracks[slice.track].name, slice.start_ns, slice.end_ns);
  }
  // epoch (main thread, 900..5500): the HtoD copy at 2100 .. the DtoH copy's
  // end at 5000; forward (3000..4000): vec_add from 3300, the memset to 4500;
  // unclosed (worker, from 3100): the worker's vec_add on stream 8.
  std::set<std::tuple<std::string, std::string, int64_t, int64_t>> expected = {
      {"epoch", "GPU 0 stream 7", 2100, 5000},
      {"forward", "GPU 0 stream 7", 3300, 4500},
      {"unclosed", "GPU 0 stream 8", 3400, 3700}};
  EXPECT_EQ(annotations, expected);
}

TEST_F(TimelineTest, KernelSlicesNameTheAllocationsTheyUse) {
  const TimelineSlice* kernel = nullptr;
  for (const TimelineSlice& slice : timeline_.slices) {
    if (slice.category == "kernel" && slice.start_ns == 3300) kernel = &slice;
  }
  ASSERT_NE(kernel, nullptr);
  std::map<std::string, decltype(TimelineArg::value)> args;
  for (const TimelineArg& arg : kernel->args) args[std::string(arg.name)] = arg.value;
  EXPECT_EQ(std::get<std::string>(args["allocations"]), "#1 device 1000 B r; #2 device 3000 B rw");
}

TEST_F(TimelineTest, GpuSlicesCarryKinetosArguments) {
  std::map<std::string, std::map<std::string, decltype(TimelineArg::value)>> by_name;
  for (const TimelineSlice& slice : timeline_.slices) {
    if (slice.start_ns != 3300 && slice.category != "gpu_memcpy" && slice.category != "gpu_memset") continue;
    for (const TimelineArg& arg : slice.args) by_name[slice.name][std::string(arg.name)] = arg.value;
  }
  auto& kernel = by_name["vec_add(float*, float*)"];
  EXPECT_EQ(std::get<Dim3>(kernel["grid"]), (Dim3{4, 1, 1}));
  EXPECT_EQ(std::get<int64_t>(kernel["correlation"]), 4);
  EXPECT_EQ(std::get<int64_t>(kernel["External id"]), 4);
  EXPECT_EQ(std::get<int64_t>(kernel["stream"]), 7);
  EXPECT_EQ(std::get<int64_t>(kernel["device"]), 0);
  auto& copy = by_name["Memcpy HtoD (Pageable -> Device)"];
  ASSERT_EQ(copy.count("bytes"), 1u);
  EXPECT_GT(std::get<double>(copy["memory bandwidth (GB/s)"]), 0);
  auto& memset = by_name["Memset (Device)"];
  EXPECT_EQ(std::get<int64_t>(memset["bytes"]), 904);  // the later one of the two
  EXPECT_DOUBLE_EQ(std::get<double>(memset["memory bandwidth (GB/s)"]), 9.04);  // 904 B in 100 ns
}

TEST_F(TimelineTest, ARuntimeCallSlicesNamesTheDriverCallFoldedIntoIt) {
  std::map<int64_t, std::map<std::string, decltype(TimelineArg::value)>> launch_args;
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

// The (producer, consumer) slice pairs of a timeline's DVDG flows.
std::set<std::pair<std::string, std::string>> dvdg_pairs(const Timeline& timeline) {
  std::map<uint64_t, std::string> from, to;
  for (const TimelineSlice& slice : timeline.slices) {
    std::string name = slice.name + "@" + std::to_string(slice.start_ns);
    for (uint64_t flow : slice.flows_out) if (!is_call_flow(flow)) from[flow] = name;
    for (uint64_t flow : slice.flows_in) if (!is_call_flow(flow)) to[flow] = name;
  }
  std::set<std::pair<std::string, std::string>> pairs;
  for (const auto& [flow, name] : from) pairs.emplace(name, to[flow]);
  return pairs;
}

TEST_F(TimelineTest, WithoutDvdgTablesTheGraphIsBuiltInMemoryWhenAsked) {
  TraceBuilder plain;
  build_sample_trace(plain);
  Progress quiet("test");
  trace::Trace model(plain.db());
  Timeline built = build_timeline(model, quiet, {DvdgFlowSource::StoredOrBuilt});
  EXPECT_EQ(built.dvdg_flow_count, kSampleDvdgFlows);
  EXPECT_EQ(dvdg_pairs(built), dvdg_pairs(timeline_)) << "the same flows as from the stored graph";
  EXPECT_FALSE(plain.db().has_table("dvdg_ops")) << "nothing is written into the trace";
}

TEST_F(TimelineTest, DeviceMemoryInUseIsACounterTrack) {
  size_t track = timeline_.tracks.size();
  for (size_t i = 0; i < timeline_.tracks.size(); ++i) {
    if (timeline_.tracks[i].name == "GPU 0 memory allocated") track = i;
  }
  ASSERT_LT(track, timeline_.tracks.size());
  EXPECT_EQ(timeline_.tracks[track].kind, TimelineTrack::Kind::Counter);
  EXPECT_EQ(timeline_.tracks[track].parent_uuid, timeline_.tracks[0].uuid);
  // Device allocations 1000 B [1500, 5400), 3000 B [1900, end), 2000 B
  // [5400, 6000) and managed 4000 B [2000, 3000); host ones do not count.
  std::vector<std::pair<int64_t, int64_t>> values;
  for (const TimelineCounter& counter : timeline_.counters) {
    EXPECT_EQ(counter.track, track);
    values.emplace_back(counter.ns, counter.value);
  }
  std::vector<std::pair<int64_t, int64_t>> expected = {
      {1500, 1000}, {1900, 4000}, {2000, 8000}, {3000, 4000}, {5400, 5000}, {6000, 3000}};
  EXPECT_EQ(values, expected);
}

// With memory_owners, each owner's bytes are a track of their own, and at
// every moment a GPU's owners add up to its memory in use.
TEST_F(TimelineTest, MemoryOwnersPartitionTheMemoryInUse) {
  Progress quiet("test");
  trace::Trace model(builder_.db());
  Timeline owned = build_timeline(model, quiet, {DvdgFlowSource::Stored, true});
  std::map<size_t, std::string> owner_tracks;
  size_t total = owned.tracks.size();
  for (size_t i = 0; i < owned.tracks.size(); ++i) {
    const std::string& name = owned.tracks[i].name;
    if (name == "GPU 0 memory allocated") total = i;
    if (name.rfind("GPU 0 memory: ", 0) == 0) {
      EXPECT_EQ(owned.tracks[i].kind, TimelineTrack::Kind::Counter);
      owner_tracks[i] = name;
    }
  }
  ASSERT_LT(total, owned.tracks.size());
  std::set<std::string> names;
  for (const auto& [index, name] : owner_tracks) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"GPU 0 memory: program", "GPU 0 memory: managed"}));
  std::map<int64_t, int64_t> totals, owners;
  std::map<size_t, int64_t> current;
  for (const TimelineCounter& counter : owned.counters) {
    if (counter.track == total) totals[counter.ns] = counter.value;
    if (owner_tracks.count(counter.track)) current[counter.track] = counter.value;
    int64_t sum = 0;
    for (const auto& [track, value] : current) sum += value;
    if (owner_tracks.count(counter.track)) owners[counter.ns] = sum;
  }
  EXPECT_EQ(owners, totals);
  EXPECT_EQ(timeline_.tracks.size(), kSampleTracks) << "without the option, no owner tracks";
}

// Counter values and slices reach a writer in one time order, also in a
// trace whose times count from a recorded start.
TEST(TimelineOrder, CounterValuesComeAmongTheSlicesByTime) {
  class TimeOrder : public TimelineSink {
   public:
    void source(const TimelineSource&) override {}
    void track(const TimelineTrack&) override {}
    void slice(const TimelineSlice& slice) override { times.push_back(slice.start_ns); }
    void counter(const TimelineCounter& counter) override { times.push_back(counter.ns); }
    void finish() override {}
    std::vector<int64_t> times;
  };
  TraceBuilder builder;
  build_sample_trace(builder);
  builder.set_meta("start_ns", "1000");
  Progress quiet("test");
  trace::Trace model(builder.db());
  TimeOrder order;
  TimelineCounts counts = stream_timeline(model, order, quiet);
  EXPECT_EQ(counts.counter_values, kSampleCounterValues);
  ASSERT_EQ(order.times.size(), kSampleSlices + kSampleCounterValues);
  EXPECT_TRUE(std::is_sorted(order.times.begin(), order.times.end()));
  EXPECT_EQ(order.times.front(), -900) << "the overlap kernel at 100 ns, before the start";
}

// The one track the writer tests put their slices on.
void add_stream_track(PerfettoWriter& writer) {
  TimelineTrack stream;
  stream.kind = TimelineTrack::Kind::Stream;
  stream.uuid = 1;
  writer.track(stream);
}

// The report decides from a count of GPU work that a trace's timeline
// cannot fit its limit: that holds only if no slice takes fewer bytes than
// the writer says, here with the least a slice can have (one track, times
// from 0, an empty name and category, no arguments).
TEST(PerfettoWriterSize, NoSliceTakesFewerBytesThanTheMinimum) {
  std::ostringstream out;
  PerfettoWriter writer(out);
  add_stream_track(writer);
  size_t before = out.str().size();
  constexpr int64_t kSlices = 1000;
  for (int64_t i = 0; i < kSlices; ++i) {
    TimelineSlice slice;
    slice.start_ns = i;
    slice.end_ns = i;
    writer.slice(slice);
  }
  writer.finish();
  size_t bytes = out.str().size() - before;
  EXPECT_GE(bytes, kSlices * PerfettoWriter::kMinSliceBytes);
  // Close to it: a minimum far below what slices take would let the report
  // write timelines that cannot fit before it gives up on them.
  EXPECT_LT(bytes, 2 * kSlices * PerfettoWriter::kMinSliceBytes);
}

// String argument values are written once and named by id after; once a
// new one would pass what the writer may hold, it forgets those it held and
// gives new ids from there, never an id twice: each value still reads back.
TEST(PerfettoWriterValues, RepeatedValuesAreInternedWithinTheLimit) {
  std::ostringstream out;
  // Room for two of these values.
  PerfettoWriter writer(out, 2 * (7 + PerfettoWriter::kInternedValueEntryBytes));
  add_stream_track(writer);
  const std::vector<std::string> values = {"aaaaaaa", "bbbbbbb", "aaaaaaa", "ccccccc", "bbbbbbb"};
  for (size_t i = 0; i < values.size(); ++i) {
    TimelineSlice slice;
    slice.start_ns = slice.end_ns = static_cast<int64_t>(i);
    slice.name = "k";
    slice.args.push_back({"pool", values[i]});
    writer.slice(slice);
  }
  writer.finish();
  pb::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(out.str()));
  std::map<uint64_t, std::string> interned;
  std::vector<std::string> read;  // each slice's value, resolved
  std::vector<uint64_t> ids;
  for (const pb::TracePacket& packet : trace.packet()) {
    for (const auto& entry : packet.interned_data().debug_annotation_string_values())
      EXPECT_TRUE(interned.emplace(entry.iid(), entry.name()).second) << "an id given twice";
    if (!packet.has_track_event() || packet.track_event().type() != pb::TrackEvent::TYPE_SLICE_BEGIN) continue;
    ASSERT_EQ(packet.track_event().debug_annotations_size(), 1);
    const pb::DebugAnnotation& annotation = packet.track_event().debug_annotations(0);
    ASSERT_TRUE(annotation.has_string_value_iid());
    ids.push_back(annotation.string_value_iid());
    read.push_back(interned.at(ids.back()));
  }
  EXPECT_EQ(read, values);
  // The third value was held; the fourth made room by forgetting both, so
  // the fifth, seen before, is given again under a new id.
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2, 1, 3, 4}));
}

// Slice names the trace stores come with their text's address: a writer
// finds a name it interned by that key without hashing the text again. Each
// slice still reads back its own name, keyed or not, each name interned once.
TEST(PerfettoWriterNames, NamesKeyedByTheirStoredTextReadBackAsTheirOwn) {
  std::ostringstream out;
  PerfettoWriter writer(out);
  add_stream_track(writer);
  const std::string gemm(300, 'g'), relu = "relu_kernel";
  struct Named {
    std::string name;
    const void* key;
  };
  const std::vector<Named> slices = {{gemm, gemm.data()}, {relu, relu.data()}, {gemm, gemm.data()},
                                     {relu, nullptr},     {"made", nullptr},   {relu, relu.data()}};
  for (size_t i = 0; i < slices.size(); ++i) {
    TimelineSlice slice;
    slice.start_ns = slice.end_ns = static_cast<int64_t>(i);
    slice.name = slices[i].name;
    slice.name_key = slices[i].key;
    writer.slice(slice);
  }
  writer.finish();
  pb::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(out.str()));
  std::map<uint64_t, std::string> interned;
  std::vector<std::string> read;
  for (const pb::TracePacket& packet : trace.packet()) {
    for (const auto& entry : packet.interned_data().event_names())
      EXPECT_TRUE(interned.emplace(entry.iid(), entry.name()).second) << "a name interned twice";
    if (!packet.has_track_event() || packet.track_event().type() != pb::TrackEvent::TYPE_SLICE_BEGIN) continue;
    read.push_back(interned.at(packet.track_event().name_iid()));
  }
  std::vector<std::string> expected;
  for (const Named& named : slices) expected.push_back(named.name);
  EXPECT_EQ(read, expected);
  EXPECT_EQ(interned.size(), 3u);
}

TEST_F(TimelineTest, PerfettoFileDecodesWithOurProto) {
  std::ostringstream out;
  write_perfetto_trace(out, timeline_);
  pb::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(out.str()));

  std::set<uint64_t> track_uuids;
  size_t processes = 0, threads = 0, counter_tracks = 0, begins = 0, ends = 0, counter_values = 0;
  std::map<uint64_t, int> open_per_track;
  std::map<uint64_t, int> flow_starts, flow_ends;
  // Interned strings by iid: each given once, before its first use.
  std::map<uint64_t, std::string> names, categories, annotation_names, string_values;
  size_t string_arguments = 0;
  auto intern = [](std::map<uint64_t, std::string>& known, const auto& entries) {
    for (const auto& entry : entries) EXPECT_TRUE(known.emplace(entry.iid(), entry.name()).second) << entry.name();
  };
  uint64_t last_timestamp = 0;
  for (const pb::TracePacket& packet : trace.packet()) {
    EXPECT_EQ(packet.trusted_packet_sequence_id(), 1u);
    intern(names, packet.interned_data().event_names());
    intern(categories, packet.interned_data().event_categories());
    intern(annotation_names, packet.interned_data().debug_annotation_names());
    intern(string_values, packet.interned_data().debug_annotation_string_values());
    if (packet.has_track_descriptor()) {
      const pb::TrackDescriptor& track = packet.track_descriptor();
      EXPECT_TRUE(track_uuids.insert(track.uuid()).second);
      processes += track.has_process();
      threads += track.has_thread();
      if (track.has_counter()) {
        ++counter_tracks;
        EXPECT_EQ(track.counter().unit(), pb::CounterDescriptor::UNIT_SIZE_BYTES);
      }
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
      EXPECT_EQ(packet.sequence_flags(), pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
      ASSERT_TRUE(names.count(event.name_iid()));
      EXPECT_FALSE(names[event.name_iid()].empty());
      ASSERT_EQ(event.category_iids_size(), 1);
      EXPECT_TRUE(categories.count(event.category_iids(0)));
      for (const pb::DebugAnnotation& annotation : event.debug_annotations()) {
        EXPECT_TRUE(annotation_names.count(annotation.name_iid()));
        // String values are named by the id given with their first use.
        EXPECT_FALSE(annotation.has_string_value()) << annotation_names[annotation.name_iid()];
        if (annotation.has_string_value_iid()) {
          ++string_arguments;
          EXPECT_TRUE(string_values.count(annotation.string_value_iid()));
        }
      }
      for (uint64_t flow : event.flow_ids()) ++flow_starts[flow];
      for (uint64_t flow : event.terminating_flow_ids()) ++flow_ends[flow];
    } else if (event.type() == pb::TrackEvent::TYPE_COUNTER) {
      ++counter_values;
      EXPECT_LE(event.counter_value(), 8000);
    } else {
      ASSERT_EQ(event.type(), pb::TrackEvent::TYPE_SLICE_END);
      ++ends;
      EXPECT_GT(open_per_track[event.track_uuid()]--, 0);  // never ends more than began
    }
  }
  EXPECT_EQ(track_uuids.size(), kSampleTracks);
  EXPECT_EQ(processes, 1u);
  EXPECT_EQ(threads, 2u);
  EXPECT_EQ(counter_tracks, 1u);
  EXPECT_EQ(counter_values, kSampleCounterValues);
  EXPECT_EQ(begins, kSampleSlices);
  EXPECT_EQ(ends, kSampleSlices);
  for (const auto& [track, open] : open_per_track) EXPECT_EQ(open, 0) << track;
  // Each flow starts once and ends once.
  // Kernels launched again and again share their name's one copy.
  EXPECT_LT(names.size(), begins);
  // Argument values repeat as names do (a kernel's grid, the pool it reads).
  EXPECT_LT(string_values.size(), string_arguments);
  EXPECT_TRUE(std::any_of(names.begin(), names.end(), [](const auto& n) { return n.second == "vec_add(float*, float*)"; }));
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

TEST_F(TimelineTest, ChromeJsonHasSlicesTrackNamesAndFlowPairsInKinetosLayout) {
  std::ostringstream out;
  write_chrome_json(out, timeline_);
  nlohmann::json document = nlohmann::json::parse(out.str());
  // The first event (overlap kernel at 100 ns) is time zero.
  EXPECT_EQ(document["otherData"]["origin_ns"], 100);
  std::map<std::string, int> phases;
  std::set<std::string> thread_names;
  std::map<uint64_t, int> starts, finishes;
  std::map<std::string, int> flow_categories;
  for (const nlohmann::json& event : document["traceEvents"]) {
    std::string phase = event["ph"];
    ++phases[phase];
    if (phase == "s") ++flow_categories[event["cat"]];
    // GPU work on (device, stream), as Kineto lays it out.
    if (phase == "X" && event["cat"] == "kernel" && event["name"] == "vec_add(float*, float*)") {
      EXPECT_EQ(event["pid"], 0);
      EXPECT_EQ(event["tid"], event["args"]["stream"]);
      EXPECT_EQ(event["args"]["grid"], nlohmann::json::array({4, 1, 1}));
    }
    if (phase == "X" && event["cat"] == "user_annotation") {
      EXPECT_EQ(event["pid"], 4242);
    }
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
  // A name per thread and stream, a name and label per process and GPU.
  EXPECT_EQ(phases["M"], 9);
  EXPECT_EQ(phases["C"], static_cast<int>(kSampleCounterValues));
  EXPECT_EQ(flow_categories["ac2g"], static_cast<int>(kSampleApiFlows));
  EXPECT_EQ(flow_categories["dvdg"], static_cast<int>(kSampleDvdgFlows));
  EXPECT_EQ(document["schemaVersion"], 1);
  EXPECT_EQ(document["deviceProperties"].size(), 1u);
  EXPECT_FALSE(document.contains("distributedInfo")) << "the sample is no rank of a job";
  EXPECT_EQ(phases["s"], static_cast<int>(kSampleApiFlows + kSampleDvdgFlows));
  EXPECT_EQ(phases["f"], static_cast<int>(kSampleApiFlows + kSampleDvdgFlows));
  EXPECT_EQ(starts.size(), finishes.size());
  EXPECT_TRUE(thread_names.count("GPU 0 stream 7"));
  EXPECT_TRUE(thread_names.count("main 100"));
}

// A trace of one rank: distributedInfo names the rank and size of its widest
// communicator, written as Kineto writes it (HTA finds it with the pattern
// `"rank":\s+(\d+)`).
TEST(TimelineRanks, ChromeJsonOfOneRankSaysWhichRankOfHowMany) {
  TraceBuilder builder;
  build_sample_trace(builder);
  for (int64_t nranks : {2, 8, 4}) {
    CommunicatorRow communicator;
    communicator.library = CommLibrary::Nccl;
    communicator.comm_id = 100 + nranks;
    communicator.rank = nranks == 8 ? 5 : 1;
    communicator.nranks = nranks;
    builder.add(communicator);
  }
  Progress quiet("test");
  trace::Trace model(builder.db());
  std::ostringstream out;
  write_chrome_json(out, build_timeline(model, quiet));
  EXPECT_NE(out.str().find("\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 5, \"world_size\": 8}"),
            std::string::npos)
      << out.str().substr(0, 400);
  nlohmann::json document = nlohmann::json::parse(out.str());
  EXPECT_EQ(document["distributedInfo"]["rank"], 5);
}

}  // namespace
}  // namespace apptracer::testing

namespace apptracer::testing {
namespace {

// Each slice's (ts, dur) as the writer wrote them, by name.
std::map<std::string, std::pair<nlohmann::json, nlohmann::json>> written_times(ChromeJsonTimes times) {
  std::ostringstream out;
  ChromeJsonWriter writer(out, times);
  writer.source({});
  TimelineTrack stream;
  stream.kind = TimelineTrack::Kind::Stream;
  stream.uuid = 1;
  stream.device = 0;
  stream.stream = 7;
  writer.track(stream);
  struct Span {
    const char* name;
    int64_t start, end;
  };
  for (const Span& span : {Span{"origin", 0, 0}, Span{"round", 1'400, 2'600},
                           Span{"short", 3'100, 3'900}, Span{"tiny", 5'100, 5'400},
                           Span{"long", 7'600, 9'400}}) {
    TimelineSlice slice;
    slice.start_ns = span.start;
    slice.end_ns = span.end;
    slice.name = span.name;
    slice.category = "kernel";
    writer.slice(slice);
  }
  writer.finish();
  std::map<std::string, std::pair<nlohmann::json, nlohmann::json>> found;
  // Held by name: a range-for over a temporary's member would outlive it.
  nlohmann::json written = nlohmann::json::parse(out.str());
  for (const nlohmann::json& event : written["traceEvents"]) {
    if (event["ph"] == "X") found[event["name"]] = {event["ts"], event["dur"]};
  }
  return found;
}

// Kineto's nanoseconds as decimals; for HTA, which would round starts up and
// ends down, whole microseconds rounded to the nearest, keeping every
// operation that has a length at 1 us or more.
TEST(ChromeJsonTimes, NanosecondDecimalsOrWholeMicrosecondsForHta) {
  auto decimals = written_times(ChromeJsonTimes::Nanoseconds);
  EXPECT_DOUBLE_EQ(decimals["round"].first.get<double>(), 1.4);
  EXPECT_DOUBLE_EQ(decimals["round"].second.get<double>(), 1.2);
  EXPECT_DOUBLE_EQ(decimals["tiny"].second.get<double>(), 0.3);

  auto whole = written_times(ChromeJsonTimes::WholeMicroseconds);
  using Times = std::pair<nlohmann::json, nlohmann::json>;
  EXPECT_EQ(whole["origin"], Times(0, 0));
  EXPECT_EQ(whole["round"], Times(1, 2));
  EXPECT_EQ(whole["short"], Times(3, 1));
  EXPECT_EQ(whole["tiny"], Times(5, 1)) << "0.3 us keeps 1 us";
  EXPECT_EQ(whole["long"], Times(8, 1)) << "7.6..9.4 us: 8..9";
  for (const auto& [name, times] : whole) {
    EXPECT_TRUE(times.first.is_number_integer() && times.second.is_number_integer()) << name;
  }
}

}  // namespace
}  // namespace apptracer::testing
