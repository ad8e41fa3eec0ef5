// A program's steps in the trace model: from NVTX step ranges however the
// program names them, else from its repeating launches; and the model limited
// to some steps.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/trace/trace.h"
#include "scratch_dir.h"
#include "trace_builder.h"

namespace apptracer::trace {
namespace {

constexpr int64_t kLaunchNs = 10'000;  // one launch issued every 10 us

class Steps : public ::testing::Test {
 protected:
  // A kernel issued now, running 1 us later for 5 us; the clock moves on.
  int64_t kernel(const std::string& name) {
    testing::KernelRow row;
    row.demangled_name = name;
    row.api_start_ns = now_;
    row.gpu_start_ns = now_ + 1'000;
    row.gpu_end_ns = now_ + 6'000;
    now_ += kLaunchNs;
    return builder_.add(row);
  }

  void kernels(const std::vector<std::string>& names) {
    for (const std::string& name : names) kernel(name);
  }

  // Kernels each launched after a pause of 5 ms (an op compiled before it runs).
  void kernels_after_pauses(const std::vector<std::string>& names) {
    for (const std::string& name : names) {
      now_ += 5'000'000;
      kernel(name);
    }
  }

  void range(const std::string& name, int64_t start, int64_t end) {
    testing::NvtxRangeRow row;
    row.name = name;
    row.start_ns = start;
    row.end_ns = end;
    builder_.add(row);
  }

  // `count` steps, each a range named by `name(i)` around two kernels.
  template <typename Name>
  void marked_steps(int count, Name name) {
    for (int i = 0; i < count; ++i) {
      int64_t start = now_;
      kernels({"forward", "backward"});
      range(name(i), start, now_ - 1);
    }
  }

  const ProcessSteps& steps() {
    trace_.emplace(builder_.db());
    const TraceSteps& all = trace_->steps();
    EXPECT_EQ(all.processes.size(), 1u);
    return all.processes.front();
  }

  std::vector<int64_t> numbers(const ProcessSteps& steps) {
    std::vector<int64_t> found;
    for (const Step& step : steps.steps) found.push_back(step.number);
    return found;
  }

  testing::TraceBuilder builder_;
  std::optional<Trace> trace_;
  int64_t now_ = 1'000'000;
};

TEST_F(Steps, NumberedNvtxRangesAreStepsWithTheirNumbers) {
  kernels({"init"});
  int64_t first = now_;
  marked_steps(4, [](int i) { return "step " + std::to_string(i + 5); });
  const ProcessSteps& found = steps();
  EXPECT_EQ(found.source, StepSource::NvtxNumbered);
  EXPECT_EQ(found.marker, "step");
  EXPECT_EQ(numbers(found), (std::vector<int64_t>{5, 6, 7, 8}));
  EXPECT_EQ(found.steps[0].start_ns, first);
  EXPECT_EQ(found.steps[0].end_ns, found.steps[1].start_ns);  // to the next step's start
  EXPECT_EQ(found.steps[3].end_ns, now_ - 1);                 // the last: to its range's end
  EXPECT_EQ(found.startup_end_ns(), first);
}

TEST_F(Steps, RangesNamedAlikeAreNumberedInOrder) {
  kernels({"init", "init"});
  marked_steps(3, [](int) { return "step"; });
  const ProcessSteps& found = steps();
  EXPECT_EQ(found.source, StepSource::NvtxOrdered);
  EXPECT_EQ(numbers(found), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(found.how_found(), "NVTX ranges \"step\" (numbered in order)");
}

// torch.profiler's steps, with other ranges around and inside them.
TEST_F(Steps, ProfilerStepsAreStepsAndOtherRangesAreNot) {
  range("epoch 0", now_, now_ + 100 * kLaunchNs);
  int64_t first = now_;
  marked_steps(3, [](int i) { return "ProfilerStep#" + std::to_string(i); });
  range("forward", first, first + kLaunchNs);
  range("iteration", first, first + kLaunchNs);  // less sure a marker than ProfilerStep
  const ProcessSteps& found = steps();
  EXPECT_EQ(found.marker, "ProfilerStep");
  EXPECT_EQ(numbers(found), (std::vector<int64_t>{0, 1, 2}));
}

// The first step ran other kernels as well (tuning, first-time work): it is
// warm-up, and start-up lasts until the second.
TEST_F(Steps, AMarkedStepUnlikeTheRestIsWarmUp) {
  int64_t first = now_;
  kernels({"autotune", "forward", "backward"});
  range("step 0", first, now_ - 1);
  int64_t second = now_;
  marked_steps(3, [](int i) { return "step " + std::to_string(i + 1); });
  const ProcessSteps& found = steps();
  ASSERT_EQ(found.steps.size(), 4u);
  EXPECT_FALSE(found.steps[0].steady);
  EXPECT_TRUE(found.steps[1].steady);
  EXPECT_EQ(found.first_steady(), 1u);
  EXPECT_EQ(found.startup_end_ns(), second);
  EXPECT_TRUE(found.has_steady_steps());
  EXPECT_EQ(found.step_at(first), 0u);
  EXPECT_EQ(found.steady_step_at(first), std::nullopt) << "warm-up is no steady step";
  EXPECT_EQ(found.steady_step_at(second), 1u);
}

// Without markers: start-up's own kernels, then 20 steps of one cycle.
TEST_F(Steps, UnmarkedStepsAreFoundFromTheRepeatingLaunches) {
  kernels({"load_weights", "gemm", "cudnn_find", "gemm", "warm"});
  std::vector<std::string> step{"embed", "gemm", "relu", "gemm", "loss", "gemm_bwd", "relu_bwd", "gemm_bwd", "sgd"};
  std::vector<int64_t> starts;
  for (int i = 0; i < 20; ++i) {
    starts.push_back(now_);
    kernels(step);
  }
  const ProcessSteps& found = steps();
  EXPECT_EQ(found.source, StepSource::LaunchCycle);
  EXPECT_EQ(found.period, step.size());
  ASSERT_EQ(found.steps.size(), 20u);
  for (size_t i = 0; i < starts.size(); ++i) {
    EXPECT_EQ(found.steps[i].number, static_cast<int64_t>(i) + 1);
    EXPECT_EQ(found.steps[i].start_ns, starts[i]);
  }
  EXPECT_EQ(found.startup_end_ns(), starts[0]);
  EXPECT_EQ(found.how_found(), "the repeating launch sequence (9 launches a step)");
  // An operation's step: the one it was issued in.
  Operation op;
  op.issue_ns = starts[3] + kLaunchNs;
  EXPECT_EQ(trace_->steps().step_of(op), 4);
  op.issue_ns = starts[0] - 1;
  EXPECT_FALSE(trace_->steps().step_of(op));
}

// Steps are found alike from the kernels' rows a command already holds and
// from the few columns streamed where it holds none, and streaming leaves
// no rows held.
TEST_F(Steps, FoundAlikeFromHeldRowsOrStreamedColumns) {
  kernels({"load_weights", "gemm"});
  std::vector<std::string> step{"embed", "gemm", "relu", "loss", "sgd"};
  for (int i = 0; i < 12; ++i) kernels(step);
  Trace streamed(builder_.db());
  const TraceSteps& from_columns = streamed.steps();
  EXPECT_FALSE(streamed.holds_rows<KernelRow>());
  Trace held(builder_.db());
  held.rows<KernelRow>();
  const TraceSteps& from_rows = held.steps();
  ASSERT_EQ(from_columns.processes.size(), 1u);
  ASSERT_EQ(from_rows.processes.size(), 1u);
  const ProcessSteps& a = from_columns.processes.front();
  const ProcessSteps& b = from_rows.processes.front();
  EXPECT_EQ(a.source, StepSource::LaunchCycle);
  EXPECT_EQ(a.period, b.period);
  ASSERT_EQ(a.steps.size(), 12u);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].number, b.steps[i].number);
    EXPECT_EQ(a.steps[i].start_ns, b.steps[i].start_ns);
    EXPECT_EQ(a.steps[i].end_ns, b.steps[i].end_ns);
  }
}

// An extra kernel every tenth step and a last step cut short.
TEST_F(Steps, UnmarkedStepsWithNoiseAndAPartialLastStep) {
  kernels({"load", "compile", "load"});
  std::vector<std::string> step{"copy_in", "conv", "bn", "relu", "conv_bwd", "bn_bwd", "adam"};
  for (int i = 0; i < 30; ++i) {
    kernels({step.begin(), step.begin() + 3});
    if (i % 10 == 9) kernel("log_metrics");
    kernels({step.begin() + 3, step.end()});
  }
  int64_t last = now_;
  kernels({step.begin(), step.begin() + 2});
  const ProcessSteps& found = steps();
  ASSERT_EQ(found.steps.size(), 31u);
  EXPECT_EQ(found.steps.back().start_ns, last);
}

// What the program does after its loop (a framework moving the model back
// to the CPU, a copy per tensor) is no step's: the last step ends where its
// launches do, not at the end of the run.
TEST_F(Steps, TearDownAfterTheLastStepIsNotPartOfIt) {
  kernels({"load", "compile", "load"});
  std::vector<std::string> step{"copy_in", "linear", "relu", "linear", "loss", "linear_bwd", "relu_bwd", "adamw"};
  for (int i = 0; i < 20; ++i) kernels(step);
  int64_t tear_down = now_;
  for (int i = 0; i < 6; ++i) kernels({"to_cpu", "to_cpu_cast"});
  const ProcessSteps& found = steps();
  ASSERT_EQ(found.steps.size(), 20u);
  EXPECT_EQ(found.steps.back().end_ns, tear_down);
  EXPECT_FALSE(found.step_at(tear_down + 1));
}

// A loop that ends partway through a step, in its optimizer's tail as a
// Lightning fit does, then copies the model back to the CPU in fewer
// launches than a step: the last step ends where its launches stop
// following the step before it.
TEST_F(Steps, ALastStepCutShortEndsBeforeTheTearDown) {
  kernels({"load", "compile", "load"});
  std::vector<std::string> step{"copy_in", "linear", "relu", "linear", "loss", "linear_bwd", "relu_bwd", "adamw"};
  for (int i = 0; i < 20; ++i) kernels(step);
  kernels({step.begin(), step.begin() + 3});
  int64_t tear_down = now_;
  kernels({"to_cpu", "to_cpu", "to_cpu", "to_cpu"});
  const ProcessSteps& found = steps();
  ASSERT_EQ(found.steps.size(), 21u);
  EXPECT_EQ(found.steps.back().end_ns, tear_down);
  EXPECT_FALSE(found.step_at(tear_down + 1));
}

// A loop whose last step is whole, then a pause of the host's (a final
// print reading the loss back) and one launch more: the last step ends as
// long after its last launch as the step before it did, not at that launch.
TEST_F(Steps, APauseAfterTheLastStepIsNotPartOfIt) {
  kernels({"load", "compile", "load"});
  std::vector<std::string> step{"copy_in", "conv", "relu", "loss", "conv_bwd", "sgd"};
  for (int i = 0; i < 20; ++i) kernels(step);
  int64_t step_end = now_;
  now_ += 100'000'000;
  int64_t read_back = now_;
  kernel("copy_out");
  const ProcessSteps& found = steps();
  ASSERT_EQ(found.steps.size(), 20u);
  EXPECT_EQ(found.steps.back().end_ns, step_end);
  EXPECT_EQ(found.steps.back().end_ns - found.steps.back().start_ns,
            found.steps[18].end_ns - found.steps[18].start_ns);
  EXPECT_FALSE(found.step_at(read_back));
}

// After a jitted loop the loss is computed again op by op, each op its own
// launch after a pause to compile it; two of them begin with the reduction a
// step begins with, and are about a step long. They are no steps, nor is
// the wait before the first part of the last step.
TEST_F(Steps, WorkAfterTheLoopBeginningAsAStepDoesIsNoStep) {
  kernels({"load", "compile", "load"});
  std::vector<std::string> step{"reduce", "dot", "fusion", "dot_bwd", "select", "transpose"};
  for (int i = 0; i < 20; ++i) kernels(step);
  int64_t loop_end = now_;
  kernels_after_pauses({"transpose", "conv", "maximum"});
  kernels_after_pauses({"reduce", "multiply", "gemm", "softmax", "iota", "compare"});
  kernels_after_pauses({"reduce", "multiply", "negate", "is_finite"});
  const ProcessSteps& found = steps();
  ASSERT_EQ(found.steps.size(), 20u);
  EXPECT_EQ(found.steps.back().end_ns, loop_end);
  EXPECT_FALSE(found.step_at(loop_end + 1));
}

// The last step's other launches hidden (issued while the next op compiled),
// the ops after the loop happen to go on in the step's order: each came after
// a pause longer than a step, so none is the last step's.
TEST_F(Steps, OpsAfterAPauseDoNotLengthenALastStepCutShort) {
  kernels({"load", "compile", "load"});
  std::vector<std::string> step{"reduce", "dot", "fusion", "dot_bwd", "select", "transpose"};
  for (int i = 0; i < 20; ++i) kernels(step);
  kernels({"reduce", "dot", "fusion"});
  int64_t loop_end = now_;
  kernels_after_pauses({"select", "transpose", "conv", "maximum"});
  const ProcessSteps& found = steps();
  ASSERT_EQ(found.steps.size(), 21u);
  EXPECT_EQ(found.steps.back().end_ns, loop_end);
}

// An evaluation every ten steps: five forward passes, each beginning as a
// step does. They are no steps: each evaluation is part of the step before
// it, and the work of the one after the loop (its argmax) is no step's.
TEST_F(Steps, EvaluationsBetweenStepsAreNoSteps) {
  kernels({"load", "compile", "load"});
  std::vector<std::string> step{"copy_in", "conv", "relu", "linear", "loss", "linear_bwd", "relu_bwd", "conv_bwd", "sgd"};
  std::vector<std::string> evaluation{"copy_in", "conv", "relu", "linear", "argmax"};
  int64_t tenth_evaluation = 0, last_evaluation = 0;
  for (int i = 0; i < 100; ++i) {
    kernels(step);
    if (i % 10 != 9) continue;
    if (i == 9) tenth_evaluation = now_;
    if (i == 99) last_evaluation = now_;
    for (int e = 0; e < 5; ++e) kernels(evaluation);
  }
  const ProcessSteps& found = steps();
  ASSERT_EQ(found.steps.size(), 100u);
  EXPECT_EQ(found.period, step.size());
  EXPECT_EQ(found.step_at(tenth_evaluation), found.step_at(tenth_evaluation - 1));
  EXPECT_LE(found.steps.back().end_ns, last_evaluation + 4 * kLaunchNs);
}

// The accuracy evaluated every ten steps and after the last, a forward pass
// that begins as the step does: the steps are the 100 trained, whichever of
// the step's launches is taken as its first. (A step taken to begin inside
// the training step holds the next one's forward pass, so the last may hold
// the evaluation's; not its argmax.)
TEST_F(Steps, AnEvaluationAfterTheLastStepIsNoStep) {
  kernels({"load", "compile", "load"});
  std::vector<std::string> step{"gather", "scatter", "linear", "loss", "linear_bwd", "scatter_bwd", "adam"};
  std::vector<std::string> evaluation{"gather", "scatter", "linear", "argmax", "mean"};
  int64_t last_evaluation = 0;
  for (int i = 0; i < 100; ++i) {
    kernels(step);
    if (i % 10 != 9) continue;
    last_evaluation = now_;
    kernels(evaluation);
  }
  const ProcessSteps& found = steps();
  ASSERT_EQ(found.steps.size(), 100u);
  EXPECT_LE(found.steps.back().end_ns, last_evaluation + 3 * kLaunchNs);
}

// A loop of one launch (a tiny kernel launched 2,000 times): each launch is
// a step, the last as much as the others.
TEST_F(Steps, ALoopOfOneLaunchIsAStepPerLaunch) {
  kernels({"memset"});
  for (int i = 0; i < 2000; ++i) kernel("tiny");
  const ProcessSteps& found = steps();
  EXPECT_EQ(found.period, 1u);
  EXPECT_EQ(found.steps.size(), 2000u);
}

// A loop's first iteration finds its convolution algorithm, makes the
// optimizer's state (extra launches), skips what needs it (a launch fewer)
// and reads the loss back: no copy of the cycle, it is still a step,
// warm-up, start-up's.
TEST_F(Steps, TheFirstIterationIsAWarmUpStep) {
  kernels({"load", "compile", "load"});
  std::vector<std::string> step{"copy_in", "conv", "relu", "linear", "loss", "linear_bwd",
                                "relu_bwd", "conv_bwd", "adam_sqrt", "adam_update"};
  int64_t first = now_;
  kernels({"copy_in", "conv_find", "conv_find", "conv", "relu", "linear", "loss", "linear_bwd", "relu_bwd",
           "conv_bwd", "zeros_like", "zeros_like", "zeros_like", "adam_update", "read_back"});
  int64_t second = now_;
  for (int i = 0; i < 19; ++i) kernels(step);
  const ProcessSteps& found = steps();
  ASSERT_EQ(found.steps.size(), 20u);
  EXPECT_FALSE(found.steps[0].steady);
  EXPECT_GE(found.steps[0].start_ns, first);
  EXPECT_LT(found.steps[0].start_ns, second);
  EXPECT_TRUE(found.steps[1].steady);
  EXPECT_EQ(found.steps[1].number, 2);
  EXPECT_EQ(found.startup_end_ns(), found.steps[1].start_ns);
}

// A short JAX run: five steps at one batch size, XLA compiling and
// autotuning the next (trial launches, each new), five more, and a last
// compile after the loop. The trial launches outnumber the steps'; issued
// while XLA compiled (its range open on the compiling thread, the trials on
// others), they are no step's, and the ten steps are found.
class StepsBesideACompiler : public Steps {
 protected:
  void run(bool compile_ranges) {
    std::vector<std::string> step{"fusion", "conv", "conv_bwd", "update"};
    auto autotune = [&](int first) {
      int64_t start = now_;
      for (int i = first; i < first + 60; ++i) kernel("trial_" + std::to_string(i));
      if (compile_ranges) range("XlaCompile:#module=jit_train_step#", start, now_);
    };
    autotune(0);
    for (int i = 0; i < 5; ++i) kernels(step);
    autotune(60);
    for (int i = 0; i < 5; ++i) kernels(step);
    autotune(120);
  }
};

TEST_F(StepsBesideACompiler, TheCompilersTrialLaunchesAreNoStepsSoTheStepsAreFound) {
  run(true);
  const ProcessSteps& found = steps();
  EXPECT_EQ(found.source, StepSource::LaunchCycle);
  EXPECT_EQ(found.period, 4u);
  EXPECT_EQ(found.steps.size(), 10u);
}

TEST_F(StepsBesideACompiler, WithoutTheCompilersRangesTheTrialsHideTheSteps) {
  run(false);
  EXPECT_EQ(steps().source, StepSource::None);
}

// A jitted step's first calls compile (XLA compiles each function at its
// first call, and again for new shapes): the first steps holding a compile
// are warm-up, start-up's; a compile later in the run leaves its step
// steady, and where every step compiled none is warm-up for it.
TEST_F(Steps, TheFirstStepsThatCompiledAreWarmUp) {
  std::vector<int64_t> starts;
  for (int i = 0; i < 8; ++i) {
    starts.push_back(now_);
    kernels({"fusion", "dot"});
    if (i < 2 || i == 5) {
      range("XlaCompile:#module=jit_update#", now_, now_ + 300'000'000);
      now_ += 300'000'000;
    }
    kernels({"dot_bwd", "update"});
    range("step " + std::to_string(i), starts.back(), now_ - 1);
  }
  const ProcessSteps& found = steps();
  ASSERT_EQ(found.steps.size(), 8u);
  EXPECT_FALSE(found.steps[0].steady);
  EXPECT_FALSE(found.steps[1].steady);
  EXPECT_EQ(found.first_steady(), 2u);
  EXPECT_EQ(found.startup_end_ns(), starts[2]);
  EXPECT_TRUE(found.steps[5].steady) << "a compile later in the run is its step's";
}

TEST_F(Steps, WhereEveryStepCompiledNoneIsWarmUpForIt) {
  for (int i = 0; i < 6; ++i) {
    kernels({"fusion", "dot"});
    range("XlaCompile:#module=jit_update#", now_, now_ + 1'000'000);
    now_ += 1'000'000;
    kernels({"dot_bwd", "update"});
  }
  const ProcessSteps& found = steps();
  ASSERT_EQ(found.steps.size(), 6u);
  EXPECT_EQ(found.first_steady(), 0u);
}

TEST_F(Steps, NoRepetitionIsNoSteps) {
  for (int i = 0; i < 50; ++i) kernel("kernel_" + std::to_string(i));
  const ProcessSteps& found = steps();
  EXPECT_EQ(found.source, StepSource::None);
  EXPECT_TRUE(found.steps.empty());
  EXPECT_FALSE(found.startup_end_ns());
  EXPECT_EQ(found.how_found(), "no NVTX step ranges and no repeating launch sequence");
}

// Limited to steps 2-3, the event rows are those issued in them, read
// before or after; allocations stay whole.
TEST_F(Steps, TheModelLimitedToStepsHoldsTheirEventsOnly) {
  testing::AllocationRow allocation;
  allocation.alloc_ns = 0;
  allocation.bytes = 4096;
  builder_.add(allocation);
  kernels({"init"});
  std::vector<int64_t> call_at;
  marked_steps(4, [&](int i) {
    testing::ApiCallRow call;
    call.name = "cudaLaunchKernel";
    call.start_ns = call.end_ns = now_ - 1;
    builder_.add(call);
    return "step " + std::to_string(i + 1);
  });
  Trace trace(builder_.db());
  EXPECT_EQ(trace.rows<KernelRow>().size(), 9u);  // read before it is limited
  EXPECT_EQ(trace.operations().kernels().size(), 9u);
  trace.limit_to_steps(StepSelection{std::make_pair(2, 3), false});
  EXPECT_EQ(trace.rows<KernelRow>().size(), 4u);
  EXPECT_EQ(trace.operations().kernels().size(), 4u);
  EXPECT_EQ(trace.rows<ApiCallRow>().size(), 2u);  // read after
  EXPECT_EQ(trace.rows<AllocationRow>().size(), 1u);
  int64_t streamed = 0;
  trace.stream<KernelRow>("", [&](const Packed<KernelRow>&) { ++streamed; });
  EXPECT_EQ(streamed, 4);
  EXPECT_EQ(trace.window()->describe(), "steps 2-3 (from NVTX ranges \"step\" (numbered by the program))");
  // The steps stay those of the whole trace.
  EXPECT_EQ(trace.steps().processes.front().steps.size(), 4u);
}

// Limited to steps, a model keeps the host calls it had made that fall in
// them, and finds each by correlation id and thread as a model that read
// them only after it was limited: the runtime call where a driver call
// shares its id, none for a call outside the window.
TEST_F(Steps, AWindowKeepsTheCallsMadeBeforeItThatItHolds) {
  kernels({"init"});
  marked_steps(4, [&](int i) {
    for (ApiDomain domain : {ApiDomain::Driver, ApiDomain::Runtime}) {
      testing::ApiCallRow call;
      call.name = domain == ApiDomain::Runtime ? "cudaMemsetAsync" : "cuMemsetD8Async";
      call.domain = domain;
      call.correlation_id = 100 + i;
      call.tid = 1 + i % 2;
      call.start_ns = call.end_ns = now_ - (domain == ApiDomain::Runtime ? 2 : 1);
      builder_.add(call);
    }
    return "step " + std::to_string(i + 1);
  });
  Trace read_after(builder_.db());
  Trace made_before(builder_.db());
  ASSERT_EQ(made_before.operations().calls().size(), 8u);
  for (Trace* trace : {&read_after, &made_before}) trace->limit_to_steps(StepSelection{std::make_pair(2, 3), false});
  const TraceOperations& expected = read_after.operations();
  const TraceOperations& kept = made_before.operations();
  auto ids = [](const TraceOperations& ops) {
    std::vector<std::pair<int64_t, int64_t>> found;
    for (const HostCall& call : ops.calls()) found.emplace_back(call.id(), call.start_ns());
    return found;
  };
  EXPECT_EQ(ids(kept), ids(expected));
  EXPECT_EQ(kept.calls().size(), 4u);
  for (int64_t correlation = 99; correlation <= 104; ++correlation) {
    const HostCall* want = expected.call(correlation);
    const HostCall* got = kept.call(correlation);
    ASSERT_EQ(got == nullptr, want == nullptr) << correlation;
    if (!want) continue;
    EXPECT_EQ(got->id(), want->id()) << correlation;
    EXPECT_EQ(got->name, "cudaMemsetAsync");
    const HostCall* next = kept.next_call_on_thread(*got);
    const HostCall* next_expected = expected.next_call_on_thread(*want);
    ASSERT_EQ(next == nullptr, next_expected == nullptr) << correlation;
    if (next) EXPECT_EQ(next->id(), next_expected->id()) << correlation;
  }
  EXPECT_EQ(kept.call(100), nullptr) << "step 1's call is outside the window";
}

// Each event table's time in SQL (kEventTimeSql) and a tensor block's
// lifetime (kLifetimeSql) narrow a read to the window without losing a row
// event_ns or lifetime_ns keeps: rows of a narrow window, streams and reads
// ahead are those of the whole trace the window keeps, at its edges and
// where a time is NULL.
TEST_F(Steps, AReadLimitedInSqlKeepsTheRowsTheWindowHolds) {
  kernels({"init"});
  marked_steps(3, [](int i) { return "step " + std::to_string(i + 1); });
  const int64_t end = now_;
  // Every time an event row can be issued at: before, at and after each
  // window edge, inside, after the run.
  std::vector<int64_t> times;
  for (int64_t t = 1'000'000 - 1; t <= end + 1; t += kLaunchNs / 4) times.push_back(t);
  // Steps start after the first launch, two launches apart; a step's range
  // ends a nanosecond before the next starts.
  for (int64_t step = 0; step <= 3; ++step) {
    int64_t edge = 1'000'000 + kLaunchNs + step * 2 * kLaunchNs;
    for (int64_t t : {edge - 2, edge - 1, edge, edge + 1}) times.push_back(t);
  }
  testing::AllocationRow segment;
  segment.alloc_ns = 0;
  segment.bytes = 1 << 30;
  int64_t parent = builder_.add(segment);
  int64_t offset = 0;
  for (int64_t t : times) {
    // Tensor blocks made at t: freed a nanosecond later, a step later, or never.
    for (std::optional<int64_t> free_ns : {std::optional<int64_t>(t + 1),
                                           std::optional<int64_t>(t + 2 * kLaunchNs), std::optional<int64_t>()}) {
      builder_.add_block(parent, offset, 256, t, free_ns);
      offset += 256;
    }
    testing::ApiCallRow call;
    call.start_ns = call.end_ns = t;
    builder_.add(call);
    testing::KernelRow activity_only;  // issued at its GPU start
    activity_only.launch_kind = LaunchKind::ActivityOnly;
    activity_only.gpu_start_ns = t;
    activity_only.gpu_end_ns = t + 1;
    builder_.add(activity_only);
    testing::KernelRow launched;  // issued at its call, which the GPU started after
    launched.api_start_ns = t;
    launched.gpu_start_ns = t + 2;
    launched.gpu_end_ns = t + 3;
    builder_.add(launched);
    testing::MemcpyRow copy;
    copy.api_start_ns = t;
    copy.gpu_start_ns = t + 2;
    copy.bytes = 8;
    builder_.add(copy);
    testing::MemsetRow memset;
    memset.gpu_start_ns = t;
    memset.bytes = 8;
    builder_.add(memset);
    testing::SyncRow sync;
    sync.start_ns = sync.end_ns = t;
    builder_.add(sync);
    testing::StreamEventRow event;
    event.ns = t;
    builder_.add(event);
    testing::UmEventRow um;
    um.end_ns = t;
    builder_.add(um);
    testing::MemAdviceRow advice;
    advice.ns = t;
    builder_.add(advice);
  }
  Trace whole(builder_.db());
  Trace trace(builder_.db());
  trace.limit_to_steps(StepSelection{std::make_pair(2, 2), false});
  ASSERT_TRUE(trace.window()->narrow());  // rows() reads in SQL too
  auto same = [&](auto row_type) {
    using Row = decltype(row_type);
    std::vector<int64_t> expected, held, streamed;
    for (const Packed<Row>& row : whole.rows<Row>()) {
      if constexpr (kIsEventRow<Row>) {
        if (trace.window()->holds(row.process, event_ns(row))) expected.push_back(row.id);
      } else {
        auto [start, end] = lifetime_ns(row);
        if (trace.window()->overlaps(row.process, start, end)) expected.push_back(row.id);
      }
    }
    for (const Packed<Row>& row : trace.rows<Row>()) held.push_back(row.id);
    trace.stream<Row>("", [&](const Packed<Row>& row) { streamed.push_back(row.id); });
    std::vector<int64_t> ahead;
    auto reader = trace.read_ahead<Row>("");
    for (Packed<Row> row; reader->next(row);) ahead.push_back(row.id);
    EXPECT_FALSE(expected.empty()) << table_of<Row>().name;
    EXPECT_EQ(held, expected) << table_of<Row>().name;
    EXPECT_EQ(streamed, expected) << table_of<Row>().name;
    EXPECT_EQ(ahead, expected) << table_of<Row>().name;
  };
  same(ApiCallRow{});
  same(KernelRow{});
  same(MemcpyRow{});
  same(MemsetRow{});
  same(SyncRow{});
  same(StreamEventRow{});
  same(UmEventRow{});
  same(MemAdviceRow{});
  same(SubAllocationRow{});
  // Blocks live in the window: made before it or in it, freed in it, after
  // it or never; not those freed before it or made after it.
  size_t blocks = trace.rows<SubAllocationRow>().size();
  EXPECT_GT(blocks, 0u);
  EXPECT_LT(blocks, whole.rows<SubAllocationRow>().size());
}

TEST_F(Steps, SteadyIsEveryStepAfterStartUp) {
  kernels({"init"});
  int64_t first = now_;
  kernels({"autotune", "forward", "backward"});
  range("step", first, now_ - 1);
  marked_steps(3, [](int) { return "step"; });
  Trace trace(builder_.db());
  trace.limit_to_steps(StepSelection{std::nullopt, true});
  EXPECT_EQ(trace.rows<KernelRow>().size(), 6u);
}

TEST_F(Steps, StepsTheTraceLacksAreOneLineErrors) {
  marked_steps(3, [](int i) { return "step " + std::to_string(i); });
  Trace trace(builder_.db(), "t.db");
  try {
    trace.limit_to_steps(StepSelection{std::make_pair(100, 200), false});
    FAIL() << "steps 100-200 of a trace of 3";
  } catch (const TraceError& error) {
    EXPECT_STREQ(error.what(),
                 "t.db: steps 100-200 asked for, but the trace's steps are 0-2 (from NVTX ranges \"step\" "
                 "(numbered by the program))");
  }
}

TEST(StepsWithout, ATraceWithoutStepsCannotBeLimitedToSome) {
  testing::TraceBuilder builder;
  Trace trace(builder.db(), "t.db");
  EXPECT_THROW(trace.limit_to_steps(StepSelection{std::nullopt, true}), TraceError);
}

// The bundled PyTorch example marks its 30 steps with ranges named "step";
// its first step (cuDNN and cuBLAS first-time work) is warm-up. Without the
// ranges, its launches give the same 30 steps.
TEST(StepsOfTheExample, ThirtyStepsMarkedOrNot) {
  testing::ScratchDir scratch;
  std::string copy = scratch / "pytorch_train.db";
  std::filesystem::copy_file(std::string(APPTRACER_EXAMPLES) + "/pytorch_train.db", copy);
  Database db(copy, Database::Mode::ReadWrite);
  {
    Trace trace(db);
    const ProcessSteps& marked = trace.steps().processes.at(0);
    EXPECT_EQ(marked.source, StepSource::NvtxOrdered);
    EXPECT_EQ(marked.steps.size(), 30u);
    EXPECT_EQ(marked.first_steady(), 1u);
  }
  db.exec("DELETE FROM nvtx_ranges");
  Trace trace(db);
  const ProcessSteps& found = trace.steps().processes.at(0);
  EXPECT_EQ(found.source, StepSource::LaunchCycle);
  EXPECT_EQ(found.steps.size(), 30u);
}

TEST(StepNumbers, AreARangeOrOneNumber) {
  EXPECT_EQ(parse_step_numbers("100-200"), std::make_pair(int64_t{100}, int64_t{200}));
  EXPECT_EQ(parse_step_numbers("7"), std::make_pair(int64_t{7}, int64_t{7}));
  for (const char* bad : {"", "-", "5-", "-5", "9-3", "a-b", "1-2-3", "1.5"}) {
    EXPECT_THROW(parse_step_numbers(bad), std::invalid_argument) << bad;
  }
}

}  // namespace
}  // namespace apptracer::trace
