// The diagnosis of a program with steps: by default its steady steps, with
// savings per step, and start-up as one finding listed after them.
#include <algorithm>
#include <fstream>

#include "analyzer/diagnose/diagnosis.h"
#include "analyzer/diagnose/findings_output.h"
#include "analyzer/diagnose/trace_facts.h"
#include "diagnose_fixture.h"
#include "scratch_dir.h"

namespace apptracer::diagnose {
namespace {

using A = AccessKind;

// Start-up: a kernel at 1 ms, 20 ms loading a module, the host busy until
// 50 ms. Then five NVTX steps of 1 ms, each launching 100 kernels of 2 us,
// one every 5 us from 10 us into the step (each launched 1 us before it
// starts): the GPU works 20% of each step.
class StepDiagnosis : public DiagnoseTest {
 public:
  static constexpr int64_t kStepsStart = 50'000'000;
  static constexpr int64_t kStep = 1'000'000;

  StepDiagnosis() {
    int64_t d = buffer(AllocKind::Device, 4096);
    kernel("load", 1'000'000, 100'000, {{d, A::Write}});
    call("cuModuleLoadData", 2'000'000, 22'000'000);
    for (int64_t step = 0; step < 5; ++step) {
      testing::NvtxRangeRow range;
      range.name = "step";
      range.start_ns = kStepsStart + step * kStep;
      range.end_ns = range.start_ns + kStep;
      trace.add(range);
      for (int i = 0; i < 100; ++i) {
        kernel("k" + std::to_string(i), range.start_ns + 10'000 + i * 5'000, 2'000,
               {{d, A::ReadWrite}}, 7, 1'500);
      }
    }
  }

  Diagnosis diagnosed(trace::StepSelection steps = {}, bool whole_run = false, const std::string& system = "") {
    trace::Trace model(trace.db());
    DiagnosisRequest request;
    request.system = system;
    request.steps = steps;
    request.whole_run = whole_run;
    return diagnose_trace(model, request);
  }
};

// In each step the GPU waits 10 us for the step's first kernel, 99 x 3 us
// between its kernels and 493 us after its last one: 800 us of its 1 ms; a
// CUDA graph leaves 1 us per kernel.
constexpr int64_t kStepIdle = 10'000 + 99 * 3'000 + 493'000;
constexpr int64_t kIdle = 5 * kStepIdle;

TEST_F(StepDiagnosis, LooksAtTheSteadyStepsAndListsStartUpLast) {
  Diagnosis diagnosis = diagnosed();
  ASSERT_GE(diagnosis.findings.size(), 2u);
  const Finding& launch_bound = diagnosis.findings.front();
  EXPECT_EQ(launch_bound.rule, "launch_bound_kernels");
  EXPECT_EQ(launch_bound.steps, 5);
  EXPECT_EQ(launch_bound.cost_ns, kIdle);
  EXPECT_EQ(launch_bound.saving_ns, kIdle - 500 * 1'000);
  EXPECT_NE(launch_bound.what.find("the step is launch-bound: GPU busy 20% of 1.00 ms per step; 100 "
                                   "launches per step from the host, one every 10.0 us"),
            std::string::npos)
      << launch_bound.what;
  EXPECT_NE(launch_bound.what.find("between them (means of the steps)"), std::string::npos)
      << "the report's step cards show medians: the finding says its numbers are means" << launch_bound.what;
  const Finding& startup = diagnosis.findings.back();
  EXPECT_EQ(startup.rule, "startup");
  EXPECT_TRUE(startup.startup);
  EXPECT_EQ(startup.cost_ns, kStepsStart - (1'000'000 - 1'000));
  EXPECT_GT(startup.cost_ns, launch_bound.saving_ns.value_or(0));
  EXPECT_NE(startup.what.find("20.00 ms loading modules (1 calls)"), std::string::npos) << startup.what;
  for (const Finding& f : diagnosis.findings) {
    // Start-up's idle GPU is start-up's finding, not the steps'.
    EXPECT_NE(f.rule, "gpu_low_utilization");
    EXPECT_NE(f.rule, "gpu_idle_gap") << f.what;
  }
  ASSERT_FALSE(diagnosis.notes.empty());
  EXPECT_EQ(diagnosis.notes[0].rfind("looked at the steady steps", 0), 0u) << diagnosis.notes[0];
}

// A step that also ran other work (an evaluation every few steps: here the
// third step launches 150 more kernels after its own) is not the step a
// graph would replay: left out of the launch-bound step's means and totals,
// and said so.
TEST_F(StepDiagnosis, AStepThatAlsoRanOtherWorkIsLeftOutOfTheLaunchBoundStep) {
  int64_t d = buffer(AllocKind::Device, 4096);
  for (int i = 0; i < 150; ++i) kernel("eval" + std::to_string(i), kStepsStart + 2 * kStep + 600'000 + i * 2'000, 1'000,
                                       {{d, A::Read}}, 7, 500);
  Diagnosis diagnosis = diagnosed();
  ASSERT_FALSE(diagnosis.findings.empty());
  const Finding& launch_bound = diagnosis.findings.front();
  ASSERT_EQ(launch_bound.rule, "launch_bound_kernels");
  EXPECT_EQ(launch_bound.steps, 4);
  EXPECT_EQ(launch_bound.cost_ns, 4 * kStepIdle);
  EXPECT_NE(launch_bound.what.find("GPU busy 20% of 1.00 ms per step; 100 launches per step"), std::string::npos)
      << launch_bound.what;
  EXPECT_NE(launch_bound.what.find("(means of the steps; 1 that also ran other work (over 1.5x the launches of "
                                   "the median step, as an evaluation) left out)"),
            std::string::npos)
      << launch_bound.what;
}

// Data-flow waste over before the first steady step (a compiler's scratch
// buffer, made and freed while it tunes) is start-up's: listed with start-up,
// after the steps' findings. A buffer made then but held through the steps
// is the steps' concern.
TEST_F(StepDiagnosis, WasteOverInStartUpIsListedWithStartUp) {
  int64_t scratch = allocated_by("cudaMalloc", AllocKind::Device, 1 << 20, 3'000'000);
  Statement freed = trace.db().prepare("UPDATE allocations SET free_ns = ? WHERE id = ?");
  freed.bind(1, int64_t{30'000'000}).bind(2, scratch).run();
  int64_t held = allocated_by("cudaMalloc", AllocKind::Device, 2 << 20, 4'000'000);
  Diagnosis diagnosis = diagnosed();
  auto named = [&](int64_t alloc) {
    return std::find_if(diagnosis.findings.begin(), diagnosis.findings.end(), [&](const Finding& f) {
      return f.rule == "allocation_never_used" &&
             std::any_of(f.rows.begin(), f.rows.end(), [&](const Evidence& e) { return e.row == alloc; });
    });
  };
  auto in_startup = named(scratch), in_steps = named(held);
  ASSERT_NE(in_startup, diagnosis.findings.end());
  ASSERT_NE(in_steps, diagnosis.findings.end());
  EXPECT_TRUE(in_startup->startup);
  EXPECT_NE(in_startup->estimate.find("in start-up"), std::string::npos) << in_startup->estimate;
  EXPECT_FALSE(in_steps->startup);
  auto first_startup = std::find_if(diagnosis.findings.begin(), diagnosis.findings.end(),
                                    [](const Finding& f) { return f.startup; });
  EXPECT_TRUE(std::none_of(first_startup, diagnosis.findings.end(),
                           [](const Finding& f) { return !f.startup && !f.minor; }))
      << "a steady-step finding ranked after a start-up one";
}

// XLA compiled jit_train_step in start-up and again, for a new shape, for
// 300 us of the third step, where its autotuner also copied from pageable
// memory: one xla_compile finding, priced at what that step took over a
// step that did not compile, its copy part of it; listed with start-up.
TEST_F(StepDiagnosis, AStepThatCompiledAgainIsOneCompileFinding) {
  xla_compiling(3'000'000, 10'000'000);
  int64_t third = kStepsStart + 2 * kStep;
  xla_compiling(third + 600'000, third + 900'000);
  int64_t host = buffer(AllocKind::PageableHost, 1 << 20);
  int64_t device = buffer(AllocKind::Device, 1 << 20);
  kernel("timed", third + 610'000, 1'000, {{device, A::Write}});
  copy(CopyKind::DtoH, device, host, 1 << 20, third + 650'000, 200'000, MemoryKind::Pageable, false);
  Diagnosis diagnosis = diagnosed();
  std::vector<const Finding*> compile;
  for (const Finding& f : diagnosis.findings) {
    EXPECT_FALSE(f.while_compiling) << f.rule << ": the compiler's work is part of the compile's finding";
    if (f.rule == "xla_compile") compile.push_back(&f);
  }
  ASSERT_EQ(compile.size(), 1u);
  const Finding& f = *compile[0];
  EXPECT_TRUE(f.startup);
  EXPECT_EQ(f.steps, 0) << "paid once per new shape";
  EXPECT_EQ(f.cost_ns, 300'000) << "the step took no longer than the others: the time XLA compiled";
  EXPECT_EQ(f.saving_ns, 300'000) << "jit_train_step was compiled before: a fixed shape saves it";
  EXPECT_NE(f.what.find("XLA compiled in 1 of the 5 steps (3)"), std::string::npos) << f.what;
  EXPECT_NE(f.what.find("1 compile(s) of 1 function(s), all compiled before (jit_train_step 1)"),
            std::string::npos)
      << f.what;
  EXPECT_NE(f.what.find("pageable_copy 1"), std::string::npos) << f.what;
  EXPECT_NE(f.what.find("sync_copy 1"), std::string::npos) << f.what;
  ASSERT_EQ(f.details.rows.size(), 1u);
  EXPECT_EQ(f.details.rows[0][0], Cell(std::string("jit_train_step")));
  EXPECT_EQ(diagnosis.findings.front().rule, "launch_bound_kernels");
  EXPECT_EQ(diagnosis.findings.front().steps, 4) << "the step that compiled is left out";
}

// A function compiled for the first time in a step compiles once wherever
// it is met: no saving from fixed shapes.
TEST_F(StepDiagnosis, AFunctionMetFirstInAStepIsNoSaving) {
  int64_t third = kStepsStart + 2 * kStep;
  xla_compiling(third + 600'000, third + 900'000, 99, "XlaCompile:#module=jit_eval_step,program_id=7#");
  Diagnosis diagnosis = diagnosed();
  auto f = std::find_if(diagnosis.findings.begin(), diagnosis.findings.end(),
                        [](const Finding& found) { return found.rule == "xla_compile"; });
  ASSERT_NE(f, diagnosis.findings.end());
  EXPECT_EQ(f->cost_ns, 300'000);
  EXPECT_FALSE(f->saving_ns.has_value());
  EXPECT_NE(f->what.find("1 compile(s) of 1 function(s), 0 compiled before (jit_eval_step 1)"), std::string::npos)
      << f->what;
  EXPECT_NE(f->estimate.find("met for the first time"), std::string::npos) << f->estimate;
}

// A step that compiled and took 3 ms where the others took 1 ms costs the
// 2 ms more it took (the host's tracing and lowering of the new shape are
// outside the compiler's 300 us).
TEST_F(StepDiagnosis, AStepThatCompiledCostsWhatItTookOverTheOthers) {
  xla_compiling(3'000'000, 10'000'000);
  testing::NvtxRangeRow range;
  range.name = "step";
  range.start_ns = kStepsStart + 5 * kStep;
  range.end_ns = range.start_ns + 3 * kStep;
  trace.add(range);
  xla_compiling(range.start_ns + 1'000'000, range.start_ns + 1'300'000);
  Diagnosis diagnosis = diagnosed();
  auto f = std::find_if(diagnosis.findings.begin(), diagnosis.findings.end(),
                        [](const Finding& found) { return found.rule == "xla_compile"; });
  ASSERT_NE(f, diagnosis.findings.end());
  EXPECT_EQ(f->cost_ns, 2 * kStep);
  EXPECT_EQ(f->saving_ns, 2 * kStep);
  EXPECT_NE(f->what.find("XLA compiled in 1 of the 6 steps (6), which took 2.00 ms longer than steps that did not"),
            std::string::npos)
      << f->what;
}

// Where every step compiled, no step is there to compare with: the cost is
// the time XLA compiled in them.
TEST_F(StepDiagnosis, WhereEveryStepCompiledTheCostIsTheCompilersTime) {
  xla_compiling(3'000'000, 10'000'000);
  for (int64_t step = 0; step < 5; ++step) {
    int64_t start = kStepsStart + step * kStep;
    xla_compiling(start + 600'000, start + 700'000);
  }
  Diagnosis diagnosis = diagnosed();
  auto f = std::find_if(diagnosis.findings.begin(), diagnosis.findings.end(),
                        [](const Finding& found) { return found.rule == "xla_compile"; });
  ASSERT_NE(f, diagnosis.findings.end());
  EXPECT_EQ(f->cost_ns, 5 * 100'000);
  EXPECT_NE(f->what.find("XLA compiled in 5 of the 5 steps (1, 2, 3, 4, 5), for 500.0 us"), std::string::npos)
      << f->what;
}

// A system file where `apptracer links` measured a graph's launch prices
// each kernel node at what it measured (600 ns) and says so; one without
// a measurement leaves the assumed 1 us, and says that.
TEST_F(StepDiagnosis, ALaunchBoundStepIsPricedByTheMeasuredNodeCost) {
  testing::ScratchDir scratch;
  std::string measured = scratch / "measured.json", unmeasured = scratch / "unmeasured.json";
  std::string paths = R"("paths": [{"name": "DtoD.gpu0", "model": {"latency_ns": 1, "bandwidth": [{"bytes": 1, "gbps": 1}]}}])";
  std::ofstream(measured) << R"({"format": "apptracer system", "version": 2, )" << paths
                          << R"(, "graph_launch": {"gpu": 0, "node_ns": 600, "launch_ns": 2000}})";
  std::ofstream(unmeasured) << R"({"format": "apptracer system", "version": 1, )" << paths << "}";
  Diagnosis with_measurement = diagnosed({}, false, measured), without = diagnosed({}, false, unmeasured);
  const Finding& priced = with_measurement.findings.front();
  ASSERT_EQ(priced.rule, "launch_bound_kernels");
  EXPECT_EQ(priced.saving_ns, kIdle - 500 * 600);
  EXPECT_NE(priced.estimate.find("less 600 ns per kernel for launching it as a graph node (measured by apptracer "
                                 "links)"),
            std::string::npos)
      << priced.estimate;
  const Finding& assumed = without.findings.front();
  EXPECT_EQ(assumed.saving_ns, kIdle - 500 * 1'000);
  EXPECT_NE(assumed.estimate.find("(assumed: "), std::string::npos) << assumed.estimate;
}

// 16 small copies between two buffers in each 1 ms step cost 8 us per
// step, under 1% of it (and all but the first copy the same data again):
// those findings are minor, listed after start-up and left out of the
// first screen; the launch-bound step is not.
TEST_F(StepDiagnosis, FindingsSavingLessPerStepThanStepsVaryComeLast) {
  int64_t from = buffer(AllocKind::Device, 4096), to = buffer(AllocKind::Device, 4096);
  for (int64_t step = 0; step < 5; ++step) {
    for (int i = 0; i < 16; ++i)
      copy(CopyKind::DtoD, from, to, 4096, kStepsStart + step * kStep + 600'000 + i * 1'000, 500);
  }
  std::vector<Finding> findings = diagnosed().findings;
  auto at = [&](const std::string& rule) {
    auto found = std::find_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.rule == rule; });
    return static_cast<size_t>(found - findings.begin());
  };
  size_t startup = at("startup"), copies = at("small_copies");
  ASSERT_LT(copies, findings.size());
  EXPECT_EQ(findings[copies].cost_ns, 5 * 16 * 500);
  EXPECT_GT(copies, startup);
  EXPECT_EQ(shown_by_default(findings), startup + 1);
  for (size_t i = 0; i < findings.size(); ++i) EXPECT_EQ(findings[i].minor, i > startup) << findings[i].rule;
  EXPECT_FALSE(findings[at("launch_bound_kernels")].minor);
}

TEST_F(StepDiagnosis, ChosenStepsAreThoseLookedAt) {
  trace::StepSelection two;
  two.numbers = std::make_pair(int64_t{2}, int64_t{3});
  Diagnosis diagnosis = diagnosed(two);
  ASSERT_FALSE(diagnosis.findings.empty());
  EXPECT_EQ(diagnosis.findings.front().rule, "launch_bound_kernels");
  EXPECT_EQ(diagnosis.findings.front().steps, 2);
  EXPECT_EQ(diagnosis.findings.front().cost_ns, 2 * kStepIdle);
  for (const Finding& f : diagnosis.findings) EXPECT_NE(f.rule, "startup");
}

// Asked for the whole run, the rules see start-up too: its idle GPU is a
// gap of its own, and no finding is per step but the step's own.
TEST_F(StepDiagnosis, TheWholeRunWhenAskedFor) {
  Diagnosis diagnosis = diagnosed({}, true);
  bool startup_gap = false;
  for (const Finding& f : diagnosis.findings) {
    startup_gap = startup_gap || (f.rule == "gpu_idle_gap" && f.fix.rfind("at start-up", 0) == 0);
    if (f.rule != "launch_bound_kernels") {
      EXPECT_EQ(f.steps, 0) << f.rule;
    }
  }
  EXPECT_TRUE(startup_gap);
  EXPECT_EQ(diagnosis.findings.back().rule, "startup");
  for (const std::string& note : diagnosis.notes) EXPECT_EQ(note.find("steady"), std::string::npos) << note;
}

// Limited to the steady steps, the facts take the whole run's graph and
// memory model instead of building them again (a training trace's costliest
// part): one graph, the window's rows and the window's memory peaks and
// steps, as facts read over the window alone have.
TEST_F(StepDiagnosis, TheStepsFactsTakeTheWholeRunsGraphAndMemoryModel) {
  trace::StepSelection steady{std::nullopt, true};
  trace::Trace model(trace.db());
  TraceFacts whole = read_trace_facts(model);
  size_t whole_ops = whole.graph.ops.size(), items = whole.memory_model.items.size();
  model.limit_to_steps(steady);
  TraceFacts steps = read_window_facts(model, {std::move(whole.graph), std::move(whole.memory_model)});
  trace::Trace alone_model(trace.db());
  alone_model.limit_to_steps(steady);
  TraceFacts alone = read_trace_facts(alone_model);
  EXPECT_EQ(steps.graph.ops.size(), whole_ops);
  EXPECT_LT(alone.graph.ops.size(), whole_ops);
  EXPECT_EQ(steps.memory_model.items.size(), items);
  EXPECT_EQ(steps.ops().kernels().size(), alone.ops().kernels().size());
  EXPECT_EQ(steps.step_window, alone.step_window);
  ASSERT_EQ(steps.memory_model.devices.size(), alone.memory_model.devices.size());
  for (size_t d = 0; d < steps.memory_model.devices.size(); ++d) {
    const memory::DeviceMemory& mine = steps.memory_model.devices[d];
    const memory::DeviceMemory& theirs = alone.memory_model.devices[d];
    EXPECT_EQ(mine.peak_bytes, theirs.peak_bytes);
    EXPECT_EQ(mine.at_ns, theirs.at_ns);
    ASSERT_EQ(mine.steps.size(), theirs.steps.size());
    ASSERT_FALSE(mine.steps.empty());
    EXPECT_EQ(mine.steps.front().number, theirs.steps.front().number);
  }
}

// A caller that reads the facts too (the report) is handed them once: the
// whole run's, start-up included, whether the rules then look at the steady
// steps or at the whole run; with chosen steps, those steps'.
TEST_F(StepDiagnosis, HandsTheFactsTheRulesReadOnce) {
  struct Handed {
    int calls = 0;
    bool windowed = false;
    size_t kernels = 0;
  };
  auto handed = [&](trace::StepSelection steps, bool whole_run) {
    trace::Trace model(trace.db());
    DiagnosisRequest request;
    request.steps = steps;
    request.whole_run = whole_run;
    Handed out;
    request.with_whole_run = [&](trace::Trace& read, const TraceFacts& facts) {
      ++out.calls;
      out.windowed = read.window() != nullptr && !facts.step_window.empty();
      out.kernels = facts.ops().kernels().size();
    };
    diagnose_trace(model, request);
    return out;
  };
  for (bool whole_run : {false, true}) {
    Handed whole = handed({}, whole_run);
    EXPECT_EQ(whole.calls, 1);
    EXPECT_FALSE(whole.windowed);
    EXPECT_EQ(whole.kernels, 501u);
  }
  trace::StepSelection two;
  two.numbers = std::make_pair(int64_t{2}, int64_t{3});
  Handed steps = handed(two, false);
  EXPECT_EQ(steps.calls, 1);
  EXPECT_TRUE(steps.windowed);
  EXPECT_LT(steps.kernels, 501u);
  EXPECT_GT(steps.kernels, 0u);
}

}  // namespace
}  // namespace apptracer::diagnose
