// --graphs: the steady steps replayed as CUDA graph launches, worked out by
// hand (graph_regions.h), and diagnose's launch-bound saving against it.
//
// Each step (an NVTX range "step", thread 1) launches kernels, one call of
// 4 us every 10 us; each kernel starts 5 us after its call began and runs
// 2 us; the step ends with a cudaStreamSynchronize 6 us after the last
// call, which waited for nothing (500 ns), and the next step begins 500 ns
// after it. The GPU works 2 us in 10: the step is launch-bound.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "command_runner.h"
#include "whatif_fixture.h"

namespace apptracer::whatif {
namespace {

using dvdg::CommandOutput;
using dvdg::run_apptracer;

// links measured: 500 ns between dependent nodes, 3 us per cuGraphLaunch.
constexpr const char* kMeasured = R"({"gpu": 0, "node_ns": 500, "launch_ns": 3000, "launch_ns_per_node": 0})";

class Graphs : public WhatifTest {
 public:
  // `steps` steps of `kernels` launches; `mid_sync`: a cudaDeviceSynchronize
  // (waiting for nothing, 500 ns) 4 us after the call of kernel `mid_sync`
  // - 1, the next call 1.5 us after it. `step_sync` false: the steps end 6
  // us after their last call, without a synchronization, and one after the
  // last step (6 us after its end) waits for everything. The first step
  // begins at `base`.
  void steps(int steps, int kernels, int mid_sync = 0, bool step_sync = true, int64_t base = 0) {
    for (int s = 0; s < steps; ++s) {
      int64_t at = base;
      for (int k = 0; k < kernels; ++k) {
        if (mid_sync && k == mid_sync) {
          sync(call("cudaDeviceSynchronize", at - 2'000, at - 1'500), SyncKind::Device, at - 2'000, at - 1'500);
        }
        kernel(call("cudaLaunchKernel", at, at + 4'000), at, at + 5'000, at + 7'000);
        at += 10'000;
      }
      at -= 6'000;  // the last call's end
      int64_t next = at + 6'000;
      if (step_sync) {
        sync(call("cudaStreamSynchronize", at + 6'000, at + 6'500), SyncKind::Stream, at + 6'000, at + 6'500, 7);
        next = at + 7'000;
      }
      testing::NvtxRangeRow range;
      range.name = "step";
      range.start_ns = base;
      range.end_ns = next;
      trace_->add(range);
      base = next;
    }
    if (!step_sync) sync(call("cudaDeviceSynchronize", base, base + 500), SyncKind::Device, base, base + 500);
  }

  WhatifResult graphs() {
    WhatifOptions options;
    options.graphs = true;
    return run(options);
  }

  static const Phase& steps_phase(const WhatifResult& result) {
    for (const Phase& phase : result.phases) {
      if (phase.kind == "steps") return phase;
    }
    throw std::runtime_error("no steps phase");
  }
};

std::string all(const std::vector<std::string>& notes) {
  std::string text;
  for (const std::string& note : notes) text += note + "\n";
  return text;
}

// Per step, measured: the launch takes the host 3 us; the kernels are issued
// then and the first starts the trace's launch latency (5 us) later, at
// 8 us, each next one 500 ns after the one before: the tenth ends at 32.5
// us. The synchronization begins its recorded 6 us after the last launch
// call, which now ends with the graph's launch, and returns its tail (3 us,
// the trace has none of its own) after the kernels: 35.5 us; the next step
// 500 ns later. 4 steps: 3 x 36 + 35.5 us, where the recording took
// 3 x 101 + 100.5.
TEST_F(Graphs, ALaunchBoundStepTakesItsKernelsAndTheirNodeCosts) {
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured);
  steps(4, 10);
  WhatifResult result = graphs();
  EXPECT_EQ(result.recorded_ns, 403'500);
  EXPECT_EQ(result.baseline_ns, 403'500);
  EXPECT_EQ(result.predicted_ns, 3 * 36'000 + 35'500);
  const Phase& steps = steps_phase(result);
  EXPECT_EQ(steps.count, 4);
  EXPECT_EQ(steps.ns[1], 4 * 101'000);
  EXPECT_EQ(steps.ns[2], 4 * 36'000);
  std::string notes = all(result.notes);
  EXPECT_NE(notes.find("4 steady steps (steps from NVTX ranges"), std::string::npos) << notes;
  EXPECT_NE(notes.find("as 4 graph launches in 4 steps, of 40 calls and 40 nodes"), std::string::npos) << notes;
  EXPECT_NE(notes.find("4 x cudaStreamSynchronize (a synchronization)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("measured by apptracer links"), std::string::npos) << notes;
  EXPECT_NE(notes.find("a steady step takes 0.036 ms in the what-if, 0.101 ms in the baseline"), std::string::npos)
      << notes;
  EXPECT_EQ(result.changes, std::vector<std::string>{"--graphs"});
}

// A range from 5 us after the step's first launch call ended (host work
// before the second) to 500 ns after the second ended, 5.5 us recorded:
// replayed as one graph launch, the two calls are one instant and the
// range's start, 5 us after the first, would come after its end.
TEST_F(Graphs, ARangeBetweenCallsTakenIntoAGraphTakesNoLessThanNothing) {
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured);
  steps(4, 10);
  for (int64_t base : {0, 101'000, 202'000, 303'000}) {
    testing::NvtxRangeRow range;
    range.name = "forward";
    range.start_ns = base + 9'000;
    range.end_ns = base + 14'500;
    trace_->add(range);
  }
  WhatifResult result = graphs();
  const Phase* forward = nullptr;
  for (const Phase& phase : result.phases) forward = phase.name == "forward" ? &phase : forward;
  ASSERT_NE(forward, nullptr);
  EXPECT_EQ(forward->ns[0], 4 * 5'500);
  EXPECT_GE(forward->ns[2], 0);
  EXPECT_LT(forward->ns[2], forward->ns[1]);
}

// Without a measurement, a node is assumed to cost 1 us and a launch 2.5 us
// of the host, and the notes say so: per step, the first kernel starts at
// 7.5 us and the tenth ends at 9.5 + 9 x 3 = 36.5 us; the synchronization
// returns at 39.5 us.
TEST_F(Graphs, WithoutAMeasuredNodeCostItIsAssumedAndSaid) {
  write_system({"DtoD.gpu0 0 1"});
  steps(4, 10);
  WhatifResult result = graphs();
  EXPECT_EQ(result.predicted_ns, 3 * 40'000 + 39'500);
  std::string notes = all(result.notes);
  EXPECT_NE(notes.find("assumed, not measured"), std::string::npos) << notes;
  EXPECT_NE(notes.find("a node starts 1.00 us after the work it follows"), std::string::npos) << notes;
}

// A synchronization in the step ends a region, and stays: each step is two
// graphs. The first (kernels 0-4) runs [8, 20] us; the synchronization,
// 4 us after the fifth call (now at 3 us), returns its recorded 1.5 us
// after them at 21.5; the sixth call, 1.5 us later, launches the second
// graph at 23 us: its kernels run from 31 us to 43 us, and the step's
// synchronization (at 26 + 6 us) returns at 46 us.
TEST_F(Graphs, ASynchronizationInTheStepEndsARegion) {
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured);
  steps(4, 10, 5);
  WhatifResult result = graphs();
  EXPECT_EQ(result.predicted_ns, 3 * 46'500 + 46'000);
  std::string notes = all(result.notes);
  EXPECT_NE(notes.find("as 8 graph launches in 4 steps"), std::string::npos) << notes;
  EXPECT_NE(notes.find("4 x cudaDeviceSynchronize (a synchronization)"), std::string::npos) << notes;
}

// With --no-syncs the synchronizations wait for nothing and end no region:
// each step is one graph again, and shorter than with the one in the middle.
TEST_F(Graphs, SynchronizationsTakenOutEndNoRegion) {
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured);
  steps(4, 10, 5);
  WhatifOptions options;
  options.graphs = true;
  options.no_syncs = true;
  WhatifResult result = run(options);
  std::string notes = all(result.notes);
  EXPECT_NE(notes.find("as 4 graph launches in 4 steps"), std::string::npos) << notes;
  EXPECT_LT(result.predicted_ns, 3 * 46'500 + 46'000);
  EXPECT_EQ(result.changes, (std::vector<std::string>{"--graphs", "--no-syncs"}));
}

// Steps that never wait: graphs let the host run ahead of the GPU, so each
// step's kernels queue behind the step before's. Step 0's run [8, 32.5] us
// as above; step k's launch is at 9k + 3 us, long before its stream frees:
// its first kernel follows the last of step k - 1 after 500 ns, and the
// tenth of step 3 ends at 32.5 + 3 x 25 = 107.5 us. The steps end there,
// not where the host left them (36 us); the synchronization after them
// returns at 110.5 us.
TEST_F(Graphs, AHostThatRunsAheadWaitsForItsStepsAtTheEnd) {
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured);
  steps(4, 10, 0, false);
  WhatifResult result = graphs();
  EXPECT_EQ(result.recorded_ns, 400'500);
  EXPECT_EQ(result.predicted_ns, 110'500);
  const Phase& steps = steps_phase(result);
  EXPECT_EQ(steps.ns[0], 400'000);
  EXPECT_EQ(steps.ns[2], 107'500);
}

// Work queued before the steps on their stream is start-up's, even where
// the what-if makes it run into them. A kernel before the first step (at
// 100 us) runs [60, 100] us recorded; kernels twice as long, it ends at 140
// us, and the steps' first kernel follows it 500 ns later: their 40
// kernels of 4 us, 500 ns apart, end at 320 us. The steps take 180 us from
// where the kernel before them ended, not 220 from where the host began
// them.
TEST_F(Graphs, WorkQueuedBeforeTheStepsIsNotTheirs) {
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured);
  kernel(call("cudaLaunchKernel", 50'000, 54'000), 50'000, 60'000, 100'000);
  steps(4, 10, 0, false, 100'000);
  WhatifOptions options;
  options.graphs = true;
  options.kernel_scale = 2;
  WhatifResult result = run(options);
  const Phase& steps = steps_phase(result);
  EXPECT_EQ(steps.ns[0], 400'000);
  EXPECT_EQ(steps.ns[2], 180'000);
}

// A copy from pageable memory in the step blocks its call, so no capture
// holds it: each step is two graphs. Pinned (--pin), it is one more node.
TEST_F(Graphs, APageableCopyEndsARegionUnlessPinned) {
  write_system({"HtoD.pageable.node0.gpu0 2000 20", "HtoD.pinned.node0.gpu0 2000 50"}, "", "NVIDIA H100",
               kMeasured);
  for (int64_t base = 0; base < 4 * 100'000; base += 100'000) {
    kernel(call("cudaLaunchKernel", base, base + 4'000), base, base + 5'000, base + 7'000);
    Copy batch{CopyKind::HtoD, MemoryKind::Pageable, 1'000'000};
    copy(call("cudaMemcpyAsync", base + 10'000, base + 70'000), batch, base + 10'000, base + 20'000, base + 60'000);
    kernel(call("cudaLaunchKernel", base + 80'000, base + 84'000), base + 80'000, base + 85'000, base + 87'000);
    testing::NvtxRangeRow range;
    range.name = "step";
    range.start_ns = base;
    range.end_ns = base + 100'000;
    trace_->add(range);
  }
  std::string staged = all(graphs().notes);
  EXPECT_NE(staged.find("as 8 graph launches in 4 steps"), std::string::npos) << staged;
  EXPECT_NE(staged.find("4 x cudaMemcpyAsync (a copy from or to pageable memory"), std::string::npos) << staged;
  WhatifOptions pinned;
  pinned.graphs = pinned.pin = true;
  std::string notes = all(run(pinned).notes);
  EXPECT_NE(notes.find("as 4 graph launches in 4 steps, of 12 calls and 12 nodes"), std::string::npos) << notes;
  EXPECT_NE(notes.find("no call in the steps stops a capture"), std::string::npos) << notes;
}

// Without --graphs, nothing of this is replayed differently; the steady
// steps are a phase of every what-if.
TEST_F(Graphs, OnlyAskedForTheStepsAreGraphs) {
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured);
  steps(4, 10);
  WhatifResult result = run();
  EXPECT_EQ(result.predicted_ns, result.recorded_ns);
  EXPECT_EQ(steps_phase(result).ns, (std::vector<int64_t>(3, 4 * 101'000)));
  EXPECT_EQ(all(result.notes).find("--graphs"), std::string::npos);
}

struct Savings {
  double diagnose_ns = 0;  // the launch_bound_kernels finding's saving
  double whatif_ns = 0;    // whatif --graphs: baseline - what-if
};

Savings savings(const std::string& trace, const std::string& system) {
  Savings out;
  CommandOutput diagnosed = run_apptracer("diagnose " + trace + " --system " + system + " --json --all");
  EXPECT_EQ(diagnosed.exit_code, 0) << diagnosed.err;
  nlohmann::json diagnosis = nlohmann::json::parse(diagnosed.out);
  for (const nlohmann::json& finding : diagnosis["findings"]) {
    if (finding["rule"] == "launch_bound_kernels") out.diagnose_ns += finding["saving_ns"].get<double>();
  }
  CommandOutput predicted = run_apptracer("whatif " + trace + " --system " + system + " --graphs --format json");
  EXPECT_EQ(predicted.exit_code, 0) << predicted.err;
  nlohmann::json result = nlohmann::json::parse(predicted.out);
  out.whatif_ns = result["baseline_ns"].get<double>() - result["predicted_ns"].get<double>();
  return out;
}

// One price for one change: 5 steps of 40 launches. Diagnose's saving is
// the GPU's idle time in the steps, 5 x (401 - 80) us, less 500 ns per
// kernel measured (1 us assumed); whatif replays each step in 3 + 5 + 40 x
// 2 + 39 x 0.5 + 3 + 0.5 us. They differ by what the graph's launch, its
// first node's latency and the synchronization's tail add to each step.
TEST_F(Graphs, DiagnoseAndWhatifAgreeOnWhatAGraphSaves) {
  steps(5, 40);
  trace_.reset();
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured);
  Savings measured = savings(trace_path_, system_path_);
  EXPECT_EQ(measured.diagnose_ns, 5 * (401'000 - 80'000) - 200 * 500);
  EXPECT_EQ(measured.whatif_ns, 5 * (401'000 - 111'000));
  EXPECT_NEAR(measured.whatif_ns, measured.diagnose_ns, 0.15 * measured.diagnose_ns);
  write_system({"DtoD.gpu0 0 1"});
  Savings assumed = savings(trace_path_, system_path_);
  EXPECT_EQ(assumed.diagnose_ns, 5 * (401'000 - 80'000) - 200 * 1'000);
  EXPECT_LT(assumed.whatif_ns, measured.whatif_ns);
  EXPECT_NEAR(assumed.whatif_ns, assumed.diagnose_ns, 0.15 * assumed.diagnose_ns);
}

// links measured what tracing adds to a launch: 1 us at the default level,
// 500 ns at --level timing.
constexpr const char* kTracing = R"({"gpu": 0, "untraced_ns": 2000, "full_ns": 3000, "timing_ns": 2500})";

// The price comes off each of the 200 launch calls first, so the savings
// are the untraced program's: diagnose's idle time less 200 x 1 us;
// whatif's baseline 200 x 1 us shorter (the host's time before each call),
// its graphs 4 x 500 ns (the 500 ns before each later step's launch call;
// the rest would come off the call, whose time the graph's launch takes).
TEST_F(Graphs, SavingsArePricedAgainstTheUntracedProgram) {
  steps(5, 40);
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured, kTracing);
  WhatifOptions options;
  options.graphs = true;
  WhatifResult result = run(options);
  EXPECT_EQ(result.baseline_ns, result.recorded_ns - 200 * 1'000);
  EXPECT_NE(all(result.notes).find("priced against the untraced program: 1.00 us taken off each of 200 kernel "
                                   "launch calls, what tracing at level full adds"),
            std::string::npos)
      << all(result.notes);
  trace_.reset();
  Savings found = savings(trace_path_, system_path_);
  EXPECT_EQ(found.diagnose_ns, 5 * (401'000 - 80'000) - 200 * 500 - 200 * 1'000);
  EXPECT_EQ(found.whatif_ns, 5 * (401'000 - 111'000) - 200 * 1'000 + 4 * 500);
}

// Four traced cuGraphLaunch calls of 100 us, 20 us apart, each issuing
// three 2 us kernels (1 us apart) 1 us before its end, the first starting
// 2 us after; links measured an untraced launch at 3 us (kMeasured). Each
// call comes down to 3 us, its kernels issued by then, done 13 us after it
// began, before the next call: the baseline is 4 x 97 us shorter than the
// recording. Without the measurement nothing comes off.
TEST_F(Graphs, TracedGraphLaunchesArePricedAtTheirUntracedCost) {
  int64_t at = 0;
  for (int launch = 0; launch < 4; ++launch) {
    int64_t correlation = call("cuGraphLaunch", at, at + 100'000);
    for (int k = 0; k < 3; ++k) kernel(correlation, at + 99'000, at + 101'000 + k * 3'000, at + 103'000 + k * 3'000);
    at += 120'000;
  }
  sync(call("cudaDeviceSynchronize", at, at + 500), SyncKind::Device, at, at + 500);
  write_system({"DtoD.gpu0 0 1"});
  WhatifResult unmeasured = run();
  EXPECT_EQ(unmeasured.baseline_ns, unmeasured.recorded_ns);
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured);
  WhatifResult result = run();
  EXPECT_EQ(result.baseline_ns, result.recorded_ns - 4 * 97'000);
  EXPECT_NE(all(result.notes).find("4 graph launch calls cut to the untraced launch of their nodes"), std::string::npos)
      << all(result.notes);
}

// A trace recorded with --level timing takes that level's price off.
TEST_F(Graphs, ATimingLevelTraceTakesItsOwnPriceOff) {
  steps(5, 40);
  trace_->set_meta("options", "output=t.db kernel_arguments=off host_allocations=off");
  trace_.reset();
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured, kTracing);
  Savings found = savings(trace_path_, system_path_);
  EXPECT_EQ(found.diagnose_ns, 5 * (401'000 - 80'000) - 200 * 500 - 200 * 500);
  EXPECT_EQ(found.whatif_ns, 5 * (401'000 - 111'000) - 200 * 500 + 4 * 500);
}

// The tracer measured its own hooks between the calls (tracer_time): one
// stretch over the 5 steps (2,005 us), 6,375 ns in its timed calls, about one
// in 32 timed: 204 us. Whatif shares it among the 204 calls that follow
// another on their thread, 1 us each, never more than the time before the
// call: the 4 first launch calls of later steps have 500 ns, the 195 others
// and the 5 synchronizations 6 us. Each synchronization then comes 1 us
// sooner after its step's last kernel and returns with the kernel's tail (3
// us after it) instead of 500 ns after it began: 500 ns of each 1 us stays.
// Diagnose takes the 204 us, all inside the steps, off the GPU's idle time.
TEST_F(Graphs, TheTracersHooksBetweenCallsComeOffToo) {
  steps(5, 40);
  trace_->add_tracer_time(0, 2'005'000, TracerSite::HostAllocate, 20, 6'375, 32);
  trace_->set_meta("tracer_time_clock_ns", "0");
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured);
  WhatifOptions options;
  options.graphs = true;
  WhatifResult result = run(options);
  EXPECT_EQ(result.baseline_ns, result.recorded_ns - (195 * 1'000 + 4 * 500 + 5 * 500));
  EXPECT_NE(all(result.notes).find("priced against the untraced program: 0.20 ms taken off the host's time "
                                   "between calls, what the tracer's own hooks took there"),
            std::string::npos)
      << all(result.notes);
  trace_.reset();
  Savings found = savings(trace_path_, system_path_);
  EXPECT_EQ(found.diagnose_ns, 5 * (401'000 - 80'000) - 200 * 500 - 204'000);
  EXPECT_NEAR(found.whatif_ns, found.diagnose_ns, 0.15 * found.diagnose_ns);
  // diagnose says what the tracer took of each step.
  CommandOutput diagnosed = run_apptracer("diagnose " + trace_path_ + " --system " + system_path_);
  EXPECT_NE(diagnosed.out.find("apptracer took about 40.8 us of each steady step (median 401.0 us) on the "
                               "program's threads: its CUDA callbacks 0 ns, its allocator hooks and module "
                               "and op ranges 40.8 us"),
            std::string::npos)
      << diagnosed.out;
}

// A timed call's time holds one clock read more than the call: meta's
// tracer_time_clock_ns comes off each (20 x 100 ns of the 6,375 ns here).
TEST_F(Graphs, TheClockReadOfEachTimedHookComesOff) {
  steps(5, 40);
  trace_->add_tracer_time(0, 2'005'000, TracerSite::FrameworkAllocator, 20, 6'375, 32);
  trace_->set_meta("tracer_time_clock_ns", "100");
  trace_.reset();
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured);
  Savings found = savings(trace_path_, system_path_);
  EXPECT_EQ(found.diagnose_ns, 5 * (401'000 - 80'000) - 200 * 500 - (6'375 - 2'000) * 32);
}

// links split its 1 us a launch: CUPTI's dispatch 600 ns, the tracer's own
// callbacks in its warm loop 400 ns. The trace measured its own callbacks,
// which a real program's launches make dearer: one stretch over the 5 steps,
// 4,100 ns in its timed calls, one in 32: 131.2 us, 640 ns in each of the 205
// calls. Both take CUPTI's 600 ns off each launch and the trace's 131.2 us,
// not links' 400 ns a launch. Whatif takes each call's 640 ns off the call
// (a synchronization's 500 ns, then 140 ns of the time before it) and
// CUPTI's part off the time before each launch call (the first of a later
// step has 500 ns there: the other 100 ns come off the call).
constexpr const char* kTracingSplit =
    R"({"gpu": 0, "untraced_ns": 2000, "full_ns": 3000, "timing_ns": 2500, "full_callbacks_ns": 400, )"
    R"("timing_callbacks_ns": 300})";

TEST_F(Graphs, WhereLinksSplitItsCostTheTracesOwnCallbacksComeOff) {
  steps(5, 40);
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured, kTracingSplit);
  // Before the trace measures its callbacks, links' whole cost comes off.
  EXPECT_NE(all(graphs().notes).find("1.00 us taken off each of 200 kernel launch calls, what tracing at level full"),
            std::string::npos);
  trace_->add_tracer_time(0, 2'005'000, TracerSite::ApiCallback, 20, 4'100, 32);
  trace_->set_meta("tracer_time_clock_ns", "0");
  WhatifResult result = graphs();
  EXPECT_NE(all(result.notes).find("priced against the untraced program: 0.60 us taken off each of 200 kernel "
                                   "launch calls, what CUPTI's dispatch at level full adds"),
            std::string::npos)
      << all(result.notes);
  EXPECT_NE(all(result.notes).find("priced against the untraced program: 0.13 ms taken off the calls, what the "
                                   "tracer's own CUDA callbacks took in them"),
            std::string::npos)
      << all(result.notes);
  // 1,240 ns off the host's time at each launch; the steps' synchronizations
  // then wait on their last kernel's tail, so of their 640 ns each between
  // none and all comes off.
  EXPECT_GE(result.recorded_ns - result.baseline_ns, 200 * 1'240 - 5 * 640);
  EXPECT_LE(result.recorded_ns - result.baseline_ns, 200 * 1'240 + 5 * 640);
  trace_.reset();
  Savings found = savings(trace_path_, system_path_);
  EXPECT_EQ(found.diagnose_ns, 5 * (401'000 - 80'000) - 200 * 500 - 200 * 600 - 131'200);
  EXPECT_NEAR(found.whatif_ns, found.diagnose_ns, 0.15 * found.diagnose_ns);
}

// The user measured the step untraced at 301 us (--untraced-step), where
// the trace holds 401 us: tracing's 100 us a step came off nothing links or
// tracer_time priced. The baseline's steady step is fitted to it by scaling
// the host's own time before each call by about 0.575 (39 gaps of 6 us, the 6 us
// before the synchronization, the 500 ns after it); diagnose takes the 100 us off the
// GPU's idle time between launches (all of its idle time: the short gaps'
// share is whole). Both savings are then the untraced step's less the
// graph's.
TEST_F(Graphs, AnUntracedStepGivenIsTheBaselinesStep) {
  steps(5, 40);
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured);
  WhatifOptions options;
  options.graphs = true;
  WhatifResult traced = run(options);
  options.untraced_step_ns = 301'000;
  WhatifResult untraced = run(options);
  const Phase& fitted = steps_phase(untraced);
  EXPECT_NEAR(static_cast<double>(fitted.ns[1]) / fitted.count, 301'000, 301);
  EXPECT_EQ(fitted.ns[0], steps_phase(traced).ns[0]);
  // The graph replay keeps only the host time around the synchronization,
  // scaled like the rest.
  EXPECT_LE(fitted.ns[2], steps_phase(traced).ns[2]);
  EXPECT_GT(fitted.ns[2], steps_phase(traced).ns[2] - 5 * 7'000);
  // The factor is said to two places: about 0.575 puts the step within 0.1%.
  std::string notes = all(untraced.notes);
  std::string said = "priced against the untraced step of 0.301 ms (--untraced-step): the program's own host time "
                     "between calls scaled by ";
  size_t at = notes.find(said);
  ASSERT_NE(at, std::string::npos) << notes;
  EXPECT_NEAR(std::stod(notes.substr(at + said.size(), 4)), 0.575, 0.0051) << notes;
  trace_.reset();
  CommandOutput diagnosed =
      run_apptracer("diagnose " + trace_path_ + " --system " + system_path_ + " --json --all --untraced-step 0.301");
  ASSERT_EQ(diagnosed.exit_code, 0) << diagnosed.err;
  double saving = 0;
  std::string estimate;
  nlohmann::json diagnosis = nlohmann::json::parse(diagnosed.out);
  for (const nlohmann::json& finding : diagnosis["findings"]) {
    if (finding["rule"] != "launch_bound_kernels") continue;
    saving += finding["saving_ns"].get<double>();
    estimate = finding["estimate"];
  }
  EXPECT_EQ(saving, 5 * (301'000 - 80'000) - 200 * 500);
  EXPECT_NE(estimate.find("against the untraced step of 301.0 us (--untraced-step): less the 100.0 us per step "
                          "that tracing added to it"),
            std::string::npos)
      << estimate;
  double whatif_saving = static_cast<double>(fitted.ns[1] - fitted.ns[2]);
  EXPECT_NEAR(whatif_saving, saving, 0.15 * saving);
}

// An untraced step shorter than the GPU's own work in it is out of reach:
// the nearest (the host's time all gone) is kept and said; a trace without
// steps cannot be priced per step at all.
TEST_F(Graphs, AnUntracedStepOutOfReachIsSaidAndOneWithoutStepsRefused) {
  steps(5, 40);
  write_system({"DtoD.gpu0 0 1"}, "", "NVIDIA H100", kMeasured);
  WhatifOptions options;
  options.untraced_step_ns = 50'000;
  WhatifResult result = run(options);
  EXPECT_NE(all(result.notes).find("--untraced-step 0.050 ms is out of the baseline's reach: with the program's "
                                   "own host time between calls scaled by 0.00 its steady step takes"),
            std::string::npos)
      << all(result.notes);
  trace_path_ = base_ + "_one_launch.db";
  trace_ = std::make_unique<testing::TraceBuilder>(trace_path_);
  trace_->add_device(testing::DeviceRow{});
  kernel(call("cudaLaunchKernel", 0, 4'000), 0, 5'000, 7'000);
  trace_.reset();
  for (const std::string& command : {"whatif " + trace_path_ + " --system " + system_path_ + " --untraced-step 1",
                                    "diagnose " + trace_path_ + " --untraced-step 1"}) {
    CommandOutput refused = run_apptracer(command);
    EXPECT_NE(refused.exit_code, 0) << command;
    EXPECT_NE(refused.err.find("--untraced-step prices the steady steps, and this trace has none"), std::string::npos)
        << refused.err;
  }
  CommandOutput bad = run_apptracer("whatif " + trace_path_ + " --system " + system_path_ + " --untraced-step -2");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--untraced-step: give the step's time in ms"), std::string::npos) << bad.err;
}

// The bundled PyTorch training trace (30 steps on an H200, each copying its
// batch from pageable memory, then 45 launches one every 106 us: the GPU
// busy 6%) and the system file measured there (before links measured graph
// launches: the node cost is assumed). Each step's region ends at its
// pageable copies and synchronizations; what the graphs save agrees with
// what diagnose promises (2.08 and 1.90 ms per step).
TEST(GraphAgreement, OnTheBundledPyTorchTrace) {
  testing::ScratchDir scratch;
  std::string trace = scratch / "pytorch_train.db";
  std::filesystem::copy_file(std::string(APPTRACER_EXAMPLES) + "/pytorch_train.db", trace);
  Savings found = savings(trace, std::string(APPTRACER_EXAMPLES) + "/h200.system.json");
  EXPECT_GT(found.diagnose_ns, 0);
  EXPECT_NEAR(found.whatif_ns, found.diagnose_ns, 0.15 * found.diagnose_ns);
}

}  // namespace
}  // namespace apptracer::whatif
