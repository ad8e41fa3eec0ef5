// Time lost between the host and the GPU: synchronizations, idle gaps and
// their causes, low utilization, allocation churn, launch-bound kernels.
#include "analyzer/diagnose/analyses.h"
#include "diagnose_fixture.h"

namespace apptracer::diagnose {
namespace {

using A = AccessKind;

class HostRules : public DiagnoseTest {
 public:
  void sync(int64_t start, int64_t end) {
    testing::SyncRow row;
    row.kind = SyncKind::Device;
    row.start_ns = start;
    row.end_ns = end;
    row.call_correlation_id = call("cudaDeviceSynchronize", start, end);
    trace.add(row);
  }

  // Two syncs between kernels on one buffer (returned): each blocks 100 us;
  // the GPU then waits 40 us and 60 us for new work.
  int64_t two_syncs_between_work() {
    int64_t d = buffer(AllocKind::Device, 4096);
    kernel("work", 10'000, 100'000, {{d, A::Write}});
    sync(20'000, 120'000);
    kernel("work", 160'000, 100'000, {{d, A::ReadWrite}});
    sync(170'000, 270'000);
    kernel("work", 330'000, 10'000, {{d, A::ReadWrite}});
    return d;
  }

  // `count` kernels of `duration` every `period` from `start`, each launched
  // by a call of `launch_ns` 1 us before it starts. Each name is launched
  // twice ("k0", "k0", "k1", ...): no sequence repeats three times, so the
  // run has no steps.
  void launch_loop(int count, int64_t start, int64_t period, int64_t duration, int64_t launch_ns,
                   int64_t d, int first = 0) {
    for (int i = 0; i < count; ++i) {
      kernel("k" + std::to_string((first + i) / 2), start + i * period, duration,
             {{d, A::ReadWrite}}, 7, launch_ns);
    }
  }

  // The launch-bound run most tests start from: 150 kernels of 2 us, one
  // every 5 us from 10 us, each call 1.5 us; the buffer they use.
  int64_t launch_bound_run() {
    int64_t d = buffer(AllocKind::Device, 4096);
    launch_loop(150, 10'000, 5'000, 2'000, 1'500, d);
    return d;
  }

  // An executable XLA ran from 0 to `end_ns` (its NVTX range): a JAX program.
  void xla_program(int64_t end_ns) {
    testing::NvtxRangeRow xla;
    xla.name = "XlaModule:#hlo_module=jit_train_step#";
    xla.start_ns = 0;
    xla.end_ns = end_ns;
    trace.add(xla);
  }

  // A PyTorch range on the traced thread: a module's by default.
  void module(const std::string& name, int64_t start, int64_t end, int64_t depth,
              FrameworkRangeKind kind = FrameworkRangeKind::Module, std::optional<int64_t> seq = std::nullopt) {
    testing::FrameworkRangeRow range;
    range.kind = kind;
    range.name = name;
    range.start_ns = start;
    range.end_ns = end;
    range.depth = depth;
    range.seq = seq;
    trace.add(range);
  }
};

// What busy intervals cover of a window: the parts inside it only.
TEST(Intervals, CoveredCountsWhatLiesInsideTheWindow) {
  Intervals busy{{50, 60}, {0, 10}, {20, 30}, {25, 40}};
  merge_intervals(busy);
  EXPECT_EQ(busy, (Intervals{{0, 10}, {20, 40}, {50, 60}}));
  EXPECT_EQ(covered_ns(busy, INT64_MIN, INT64_MAX), 40);
  EXPECT_EQ(covered_ns(busy, 5, 55), 5 + 20 + 5);
  EXPECT_EQ(covered_ns(busy, 10, 20), 0);
  EXPECT_EQ(covered_ns(busy, 41, 49), 0);
  EXPECT_EQ(covered_ns(busy, 60, 100), 0);
}

TEST_F(HostRules, SyncsCostTheBlockedTimeAndSaveTheIdleTimeAfterThem) {
  two_syncs_between_work();
  auto found = findings("sync_api");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 200'000);
  EXPECT_EQ(found[0].saving_ns, 40'000 + 60'000);
  EXPECT_EQ(rows_of(found[0], "syncs"), (std::vector<int64_t>{1, 2}));
  EXPECT_NE(found[0].fix.find("cudaEventSynchronize"), std::string::npos);
}

// Where the trace records PyTorch's modules and ops, a finding names the
// module and op its call was made in: the sync inside the loss's op.
TEST_F(HostRules, ASyncFindingNamesTheModuleAndOpItWasMadeIn) {
  two_syncs_between_work();
  module("loss", 15'000, 125'000, 0);
  testing::FrameworkRangeRow op;
  op.name = "aten::item";
  op.start_ns = 19'000;
  op.end_ns = 121'000;
  trace.add(op);
  auto found = findings("sync_api");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].framework, "module loss (forward), op aten::item");
}

// In a PyTorch program the host syncs where it reads a GPU value (loss.item()):
// the fix says so rather than naming CUDA calls it does not make.
TEST_F(HostRules, PytorchSyncsAreToldNotToReadGpuValuesEachStep) {
  int64_t d = two_syncs_between_work();
  block(d, 0, 4096);
  auto found = findings("sync_api");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].fix.find("loss.item()"), std::string::npos) << found[0].fix;
  EXPECT_EQ(found[0].fix.find("cudaEventSynchronize"), std::string::npos) << found[0].fix;
}

// PyTorch waits for each copy to the GPU from pageable memory it makes
// (.cuda() of a DataLoader's batch): a sync 5 us after its thread's
// host-to-device copy call is that copy's own, and the fix is the pinned,
// non-blocking copy, not reading fewer results. After a copy back to the
// host (loss.item()), or 60 us after the copy, the sync is a read.
TEST_F(HostRules, PytorchSyncsAfterCopiesToTheGpuAreToldToPinAndCopyNonBlocking) {
  int64_t d = two_syncs_between_work();
  block(d, 0, 4096);
  int64_t host = buffer(AllocKind::PinnedHost, 4096);
  copy(CopyKind::HtoD, host, d, 4096, 15'000, 1'000, MemoryKind::Pageable);  // its call ends at 14.6 us
  copy(CopyKind::HtoD, host, d, 4096, 165'000, 1'000, MemoryKind::Pageable);
  auto found = findings("sync_api");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].fix.rfind("PyTorch waits for each copy to the GPU from pageable memory", 0), 0u)
      << found[0].fix;
  EXPECT_NE(found[0].fix.find("pin_memory=True"), std::string::npos) << found[0].fix;
  EXPECT_EQ(found[0].fix.find("loss.item()"), std::string::npos) << found[0].fix;
}

TEST_F(HostRules, PytorchSyncsAfterCopiesAndAfterReadsAreToldBothFixes) {
  int64_t d = two_syncs_between_work();
  block(d, 0, 4096);
  int64_t host = buffer(AllocKind::PinnedHost, 4096);
  copy(CopyKind::HtoD, host, d, 4096, 15'000, 1'000, MemoryKind::Pageable);
  copy(CopyKind::DtoH, d, host, 4, 165'000, 1'000, MemoryKind::Pageable);
  auto found = findings("sync_api");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].fix.rfind("1 of them wait for copies to the GPU: PyTorch waits", 0), 0u) << found[0].fix;
  EXPECT_NE(found[0].fix.find("; the other 1: do not read GPU results on the host every step (loss.item()"),
            std::string::npos)
      << found[0].fix;
}

TEST_F(HostRules, PytorchSyncsLongAfterACopyAreReads) {
  int64_t d = two_syncs_between_work();
  block(d, 0, 4096);
  int64_t host = buffer(AllocKind::PinnedHost, 4096);
  copy(CopyKind::HtoD, host, d, 4096, 110'000, 1'000, MemoryKind::Pageable);  // its call ends 60.4 us before the sync
  auto found = findings("sync_api");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].fix.rfind("do not read GPU results", 0), 0u) << found[0].fix;
}

// Each sync waits 41 us for a kernel; the host then works 549 us before the
// next kernel starts. Not waiting, that work runs under the kernel: 41 us a
// sync go, not the 549 us the GPU then idled (the host does that work anyway).
TEST_F(HostRules, SyncsSaveNoMoreThanTheyBlocked) {
  int64_t d = buffer(AllocKind::Device, 4096);
  for (int64_t i = 0; i < 3; ++i) {
    int64_t t = 10'000 + i * 600'000;
    kernel("work", t, 50'000, {{d, A::ReadWrite}});
    sync(t + 10'000, t + 51'000);
  }
  kernel("work", 1'810'000, 50'000, {{d, A::ReadWrite}});
  auto found = findings("sync_api");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 3 * 41'000);
  EXPECT_EQ(found[0].saving_ns, 3 * 41'000);
  EXPECT_NE(found[0].what.find("the GPU then waited 1.65 ms"), std::string::npos) << found[0].what;
}

TEST_F(HostRules, ShortSyncsAreNotWorthAFinding) {
  int64_t d = buffer(AllocKind::Device, 4096);
  kernel("work", 10'000, 100'000, {{d, A::Write}});
  sync(100'000, 150'000);
  EXPECT_TRUE(findings("sync_api").empty());
}

TEST_F(HostRules, AFinalSyncLeavesNoIdleGpu) {
  int64_t d = buffer(AllocKind::Device, 4096);
  kernel("work", 10'000, 1'000'000, {{d, A::Write}});
  sync(20'000, 1'010'000);
  EXPECT_TRUE(findings("sync_api").empty());
}

// The GPU runs dry at 100 us; the host spends 3 ms in cudaMalloc and 1.9 ms
// computing, then launches the next kernel at 5 ms; it starts at 5.1 ms.
// Queued before the host's work, that 50 us kernel would have run under it:
// all the gap's 4.9 ms late start cannot go, only that kernel's time.
TEST_F(HostRules, GpuIdleGapNamesTheHostCallsThatCausedIt) {
  int64_t d = buffer(AllocKind::Device, 4096);
  int64_t before = kernel("first", 10'000, 90'000, {{d, A::Write}});
  call("cudaMalloc", 200'000, 3'200'000);
  int64_t after = kernel("second", 5'100'000, 50'000, {{d, A::ReadWrite}}, 7, 300);
  // kernel() issues its launch 1 us before the GPU start: move it to 5.0 ms.
  trace.db().exec("UPDATE api_calls SET start_ns = 5000000, end_ns = 5000300 "
                  "WHERE correlation_id = (SELECT call_correlation_id FROM kernels WHERE id = " +
                  std::to_string(after) + ")");
  auto found = findings("gpu_idle_gap");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  EXPECT_EQ(f.cost_ns, 5'000'000);
  EXPECT_EQ(f.saving_ns, 50'000);
  EXPECT_NE(f.what.find("issued it 4.90 ms after the GPU ran dry"), std::string::npos) << f.what;
  EXPECT_EQ(rows_of(f, "kernels"), (std::vector<int64_t>{before, after}));
  EXPECT_NE(f.what.find("3.00 ms in cudaMalloc (1 call(s))"), std::string::npos) << f.what;
  EXPECT_NE(f.what.find("1.90 ms outside CUDA calls"), std::string::npos) << f.what;
  EXPECT_NE(f.fix.find("allocate once"), std::string::npos) << f.fix;
  EXPECT_EQ(f.call_site, "cudaLaunchKernel (thread 1)");
}

// Where the trace records PyTorch's modules and ops, a gap says which
// module and op issued the work the GPU waited for: where the host was.
// Every rule's finding says it where it is located (locate).
TEST_F(HostRules, GpuIdleGapSaysWhichModuleAndOpIssuedTheNextWork) {
  int64_t d = buffer(AllocKind::Device, 4096);
  kernel("first", 10'000, 90'000, {{d, A::Write}});
  kernel("second", 5'100'000, 50'000, {{d, A::ReadWrite}});
  testing::FrameworkRangeRow module;
  module.kind = FrameworkRangeKind::Module;
  module.name = "layer1.0";
  module.start_ns = 4'000'000;
  module.end_ns = 5'200'000;
  trace.add(module);
  testing::FrameworkRangeRow op;
  op.name = "aten::add_";
  op.start_ns = 5'090'000;
  op.end_ns = 5'100'000;
  trace.add(op);
  auto found = findings("gpu_idle_gap");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].what.find("until second"), std::string::npos) << found[0].what;
  EXPECT_EQ(found[0].framework, "module layer1.0 (forward), op aten::add_");
}

// A PyTorch gap before the optimizer's kernels (its step's scope, as torch
// names it) is the optimizer's Python: the fix is the fused or compiled step.
TEST_F(HostRules, AGapBeforeAPytorchOptimizersWorkIsToldToFuseOrCompileIt) {
  int64_t d = buffer(AllocKind::Device, 4096);
  block(d, 0, 4096);
  kernel("first", 10'000, 90'000, {{d, A::Write}});
  kernel("second", 5'100'000, 50'000, {{d, A::ReadWrite}});
  testing::FrameworkRangeRow scope;
  scope.kind = FrameworkRangeKind::Scope;
  scope.name = "Optimizer.step#AdamW.step";
  scope.start_ns = 4'000'000;
  scope.end_ns = 5'200'000;
  trace.add(scope);
  auto found = findings("gpu_idle_gap");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].fix.find("the host ran the optimizer's Python (Optimizer.step#AdamW.step)"), std::string::npos)
      << found[0].fix;
  EXPECT_NE(found[0].fix.find("fused=True"), std::string::npos) << found[0].fix;
  // Fused already (fused=True launches a Fused...MathFunctor kernel): the
  // fix is to compile or capture the step, not to fuse it.
  kernel("multi_tensor_apply_kernel<FusedAdamMathFunctor<float>>", 5'160'000, 10'000, {{d, A::ReadWrite}});
  found = findings("gpu_idle_gap");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].fix.find("fused=True"), std::string::npos) << found[0].fix;
  EXPECT_NE(found[0].fix.find("it runs fused already"), std::string::npos) << found[0].fix;
}

// A PyTorch gap the host spent in the DataLoader's scope (as torch names its
// __next__) is the next batch loading: on the training thread (no workers),
// the fix is worker processes; from workers, more of them or less work per
// sample. Under half the gap in it, the gap is the host's other work.
// A trace of its own for each case of a test.
struct HostRulesFixture : HostRules {
  void TestBody() override {}
};

TEST_F(HostRules, AGapThePytorchHostSpentLoadingTheNextBatchIsToldToUseWorkers) {
  auto gap_fix = [](const std::string& loader, int64_t end_ns) {
    HostRulesFixture rules;
    int64_t d = rules.buffer(AllocKind::Device, 4096);
    rules.block(d, 0, 4096);
    rules.kernel("first", 10'000, 90'000, {{d, A::Write}});
    rules.kernel("second", 5'100'000, 50'000, {{d, A::ReadWrite}});
    testing::FrameworkRangeRow scope;
    scope.kind = FrameworkRangeKind::Scope;
    scope.name = "enumerate(DataLoader)#" + loader + ".__next__";
    scope.start_ns = 200'000;
    scope.end_ns = end_ns;
    rules.trace.add(scope);
    auto found = rules.findings("gpu_idle_gap");
    EXPECT_EQ(found.size(), 1u);
    return found.empty() ? std::string() : found[0].fix;
  };
  std::string fix = gap_fix("_SingleProcessDataLoaderIter", 4'800'000);
  EXPECT_EQ(fix.rfind("the host loaded the next batch while the GPU waited", 0), 0u) << fix;
  EXPECT_NE(fix.find("num_workers=4"), std::string::npos) << fix;
  fix = gap_fix("_MultiProcessingDataLoaderIter", 4'800'000);
  EXPECT_NE(fix.find("its workers cannot keep up"), std::string::npos) << fix;
  fix = gap_fix("_SingleProcessDataLoaderIter", 2'000'000);  // 1.8 of the host's 5 ms
  EXPECT_EQ(fix.rfind("the host computed outside CUDA calls", 0), 0u) << fix;
}

// Two gaps the host computed through (launches 1 us before each kernel):
// 5 ms until a 200 us kernel, then 4.7 ms until a 5 ms one. The first gap's
// saving stops at the 200 us that ran before the second gap; the second's
// late start fits under its 5 ms kernel whole. One cause, one finding.
TEST_F(HostRules, AGapSavesAtMostTheWorkUntilTheNextGap) {
  int64_t d = buffer(AllocKind::Device, 4096);
  kernel("first", 0, 100'000, {{d, A::Write}});
  kernel("second", 5'100'000, 200'000, {{d, A::ReadWrite}});
  kernel("third", 10'000'000, 5'000'000, {{d, A::ReadWrite}});
  auto found = findings("gpu_idle_gap");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].occurrences, 2);
  EXPECT_EQ(found[0].cost_ns, 5'000'000 + 4'700'000);
  EXPECT_EQ(found[0].saving_ns, 200'000 + 4'699'000);
  EXPECT_NE(found[0].what.find("idle 2 times, 9.70 ms in all (the longest 5.00 ms after first until "
                               "second)"),
            std::string::npos)
      << found[0].what;
}

// A gap the host spent outside CUDA calls gets the framework's advice: in
// a JAX program (XLA's ranges), its dispatch and result reads between steps.
TEST_F(HostRules, AGapOutsideCudaCallsInAJaxProgramGetsJaxsAdvice) {
  int64_t d = buffer(AllocKind::Device, 4096);
  kernel("first", 0, 100'000, {{d, A::Write}});
  kernel("second", 5'100'000, 200'000, {{d, A::ReadWrite}});
  ASSERT_EQ(findings("gpu_idle_gap").size(), 1u);
  EXPECT_NE(findings("gpu_idle_gap")[0].fix.find("queue the next GPU work before that CPU work"), std::string::npos);
  xla_program(100'000);
  auto found = findings("gpu_idle_gap");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].fix.find("jax.lax.scan"), std::string::npos) << found[0].fix;
  EXPECT_NE(found[0].fix.find("jax.device_get"), std::string::npos) << found[0].fix;
}

// The same gap while XLA compiled a new shape (its range open on another
// thread, over part of the gap): the compiler's, part of the compile's one
// finding, which is paid once per compile.
TEST_F(HostRules, AGapWhileXlaCompiledIsPartOfTheCompile) {
  int64_t d = buffer(AllocKind::Device, 4096);
  kernel("first", 0, 100'000, {{d, A::Write}});
  kernel("second", 5'100'000, 200'000, {{d, A::ReadWrite}});
  xla_program(100'000);
  xla_compiling(2'000'000, 4'000'000);
  EXPECT_TRUE(findings("gpu_idle_gap").empty());
  auto found = findings("xla_compile");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(found[0].startup);
  EXPECT_EQ(found[0].steps, 0) << "paid once per compile, not per step";
  EXPECT_NE(found[0].what.find("gpu_idle_gap 1"), std::string::npos) << found[0].what;
  EXPECT_NE(found[0].fix.find("jax_explain_cache_misses"), std::string::npos) << found[0].fix;
}

// Gaps are grouped by what the host did while the GPU waited: two spent in
// cudaMalloc are one finding, one spent computing another.
TEST_F(HostRules, GpuIdleGapsAreOneFindingPerCause) {
  int64_t d = buffer(AllocKind::Device, 4096);
  kernel("a", 0, 100'000, {{d, A::Write}});
  call("cudaMalloc", 200'000, 3'000'000);
  kernel("b", 3'100'000, 100'000, {{d, A::ReadWrite}});
  kernel("c", 6'000'000, 100'000, {{d, A::ReadWrite}});
  call("cudaMalloc", 6'200'000, 9'000'000);
  kernel("d", 9'100'000, 100'000, {{d, A::ReadWrite}});
  auto found = findings("gpu_idle_gap");
  ASSERT_EQ(found.size(), 2u);
  std::sort(found.begin(), found.end(),
            [](const Finding& a, const Finding& b) { return a.occurrences > b.occurrences; });
  EXPECT_EQ(found[0].occurrences, 2);
  EXPECT_NE(found[0].fix.find("allocate once"), std::string::npos) << found[0].fix;
  EXPECT_EQ(found[1].occurrences, 1);
  EXPECT_NE(found[1].fix.find("outside CUDA calls"), std::string::npos) << found[1].fix;
}

// A warm-up run of the step's kernel, then 3 ms of start-up before NVTX range
// "step 0"; each step's kernel then waits 2.9 ms on the host. The steps'
// gaps are one site; start-up, paid once, is a finding of its own.
TEST_F(HostRules, StartUpBeforeTheFirstStepIsItsOwnGap) {
  int64_t d = buffer(AllocKind::Device, 4096);
  kernel("work", 0, 100'000, {{d, A::Write}});
  for (int64_t step = 0; step < 3; ++step) {
    testing::NvtxRangeRow range;
    range.name = "step " + std::to_string(step);
    range.start_ns = 3'000'000 + step * 3'000'000;
    range.end_ns = range.start_ns + 1'000'000;
    trace.add(range);
    kernel("work", range.start_ns + 500'000, 100'000, {{d, A::ReadWrite}});
  }
  auto found = findings("gpu_idle_gap");
  ASSERT_EQ(found.size(), 2u);
  std::sort(found.begin(), found.end(),
            [](const Finding& a, const Finding& b) { return a.occurrences < b.occurrences; });
  EXPECT_EQ(found[0].occurrences, 1);
  EXPECT_EQ(found[0].cost_ns, 3'400'000);
  EXPECT_EQ(found[0].fix.rfind("at start-up, before the first steady step: ", 0), 0u) << found[0].fix;
  EXPECT_EQ(found[1].occurrences, 2);
  EXPECT_EQ(found[1].cost_ns, 2 * 2'900'000);
  EXPECT_EQ(found[1].fix.find("start-up"), std::string::npos) << found[1].fix;
}

// Steps the program marks with ranges named alike ("step", as the bundled
// PyTorch example does) or not at all: 3 ms of start-up after a first kernel,
// then four steps of two kernels, each 2.8 ms after the last.
class StartUp : public HostRules {
 public:
  void start_up_then_steps(bool marked) {
    int64_t d = buffer(AllocKind::Device, 4096);
    kernel("load", 0, 100'000, {{d, A::Write}});
    for (int64_t step = 0; step < 4; ++step) {
      int64_t start = 3'000'000 + step * 3'000'000;
      if (marked) {
        testing::NvtxRangeRow range;
        range.name = "step";
        range.start_ns = start;
        range.end_ns = start + 1'000'000;
        trace.add(range);
      }
      kernel("forward", start + 500'000, 100'000, {{d, A::ReadWrite}});
      kernel("backward", start + 600'000, 100'000, {{d, A::ReadWrite}});
    }
    auto found = findings("gpu_idle_gap");
    ASSERT_EQ(found.size(), 2u);
    std::sort(found.begin(), found.end(),
              [](const Finding& a, const Finding& b) { return a.occurrences < b.occurrences; });
    EXPECT_EQ(found[0].cost_ns, 3'400'000);
    EXPECT_EQ(found[0].fix.rfind("at start-up, before the first steady step: ", 0), 0u) << found[0].fix;
    EXPECT_EQ(found[1].occurrences, 3);
    EXPECT_EQ(found[1].fix.find("start-up"), std::string::npos) << found[1].fix;
  }
};

TEST_F(StartUp, BeforeRangesNamedAlike) { start_up_then_steps(true); }

TEST_F(StartUp, BeforeTheRepeatingLaunchesOfAnUnmarkedLoop) { start_up_then_steps(false); }

TEST_F(HostRules, BackToBackWorkHasNoGap) {
  int64_t d = buffer(AllocKind::Device, 4096);
  kernel("first", 10'000, 90'000, {{d, A::Write}});
  kernel("second", 300'000, 50'000, {{d, A::ReadWrite}});
  EXPECT_TRUE(findings("gpu_idle_gap").empty());
  EXPECT_TRUE(findings("gpu_low_utilization").empty());
}

TEST_F(HostRules, LowUtilizationStretch) {
  int64_t d = buffer(AllocKind::Device, 4096);
  kernel("first", 0, 3'000'000, {{d, A::Write}});
  kernel("second", 30'000'000, 3'000'000, {{d, A::ReadWrite}});
  auto found = findings("gpu_low_utilization");
  // 33 ms in 30 chunks of 1.1 ms: chunks 2 and 27 are 8/11 busy, 3..26 idle.
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 24 * 1'100'000);
  EXPECT_NE(found[0].what.find("busy 0% of 26.40 ms"), std::string::npos) << found[0].what;
}

// Two GPUs idle over the same 26.4 ms: one finding each, each costing its
// own idle time, none more than the run lasted.
TEST_F(HostRules, LowUtilizationIsPerDevice) {
  testing::DeviceRow second;
  second.id = 1;
  trace.add_device(second);
  int64_t d = buffer(AllocKind::Device, 4096);
  for (int64_t device : {0, 1}) {
    int64_t first = kernel("first", 0, 3'000'000, {{d, A::Write}});
    int64_t last = kernel("second", 30'000'000, 3'000'000, {{d, A::ReadWrite}});
    trace.db().exec("UPDATE kernels SET device = " + std::to_string(device) + " WHERE id IN (" +
                    std::to_string(first) + ", " + std::to_string(last) + ")");
  }
  auto found = findings("gpu_low_utilization");
  ASSERT_EQ(found.size(), 2u);
  for (const Finding& f : found) {
    EXPECT_EQ(f.cost_ns, 24 * 1'100'000) << f.what;
    EXPECT_EQ(f.occurrences, 1) << f.what;
  }
  EXPECT_NE(found[0].what.find("device 0"), std::string::npos) << found[0].what;
  EXPECT_NE(found[1].what.find("device 1"), std::string::npos) << found[1].what;
}

// A damaged trace whose work spans all of int64: every rule finishes (the
// utilization chunks are as many as ever, not one per nanosecond) and no
// time wraps around to a negative one.
TEST_F(HostRules, ExtremeTimesEndInBoundedTimeWithoutWrappingAround) {
  int64_t d = buffer(AllocKind::Device, 4096);
  kernel("first", 0, 3'000'000, {{d, A::Write}});
  int64_t last = kernel("last", 30'000'000, 1000, {{d, A::ReadWrite}});
  trace.db().exec("UPDATE kernels SET gpu_start_ns = 9223372036854774807, gpu_end_ns = 9223372036854775807 "
                  "WHERE id = " + std::to_string(last));
  auto low = findings("gpu_low_utilization");
  ASSERT_EQ(low.size(), 1u);
  EXPECT_EQ(low[0].cost_ns, 9223372036854775807 - 3'000'000 - 1000) << low[0].what;

  trace.db().exec("UPDATE kernels SET gpu_start_ns = -9223372036854775808 WHERE gpu_start_ns = 0");
  trace.db().exec("UPDATE api_calls SET end_ns = 9223372036854775807");
  trace::Trace model(trace.db());
  TraceFacts facts = read_trace_facts(model);
  MeasuredTransferCost measured(facts);
  for (const Finding& f : diagnose(facts, measured)) {
    EXPECT_GE(f.cost_ns, 0) << f.rule << ": " << f.what;
    EXPECT_GE(f.saving_ns.value_or(0), 0) << f.rule << ": " << f.what;
  }
  Table breakdown = temporal_breakdown(facts);
  ASSERT_EQ(breakdown.rows.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(breakdown.rows[0][1]), 9223372036854775807) << "the span, saturated";
  EXPECT_EQ(all_analyses(facts, Thresholds()).size(), 8u);
}

TEST_F(HostRules, AllocationChurn) {
  std::vector<int64_t> ids = churn(AllocKind::Device);
  auto found = findings("allocation_churn");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "allocations"), ids);
  EXPECT_EQ(found[0].cost_ns, 5 * 15'000);
  EXPECT_EQ(found[0].saving_ns, 4 * 15'000);
  EXPECT_NE(found[0].fix.find("allocate once"), std::string::npos);
}

TEST_F(HostRules, OneAllocationReusedIsNotChurn) {
  testing::AllocationRow row;
  row.kind = AllocKind::Device;
  row.address = 0x7e0000000000;
  row.bytes = 1 << 20;
  row.alloc_correlation_id = call("cudaMalloc", 0, 10'000);
  trace.add(row);
  EXPECT_TRUE(findings("allocation_churn").empty());
}

// 150 kernels of 2 us, each starting 3 us after the previous one ended; the
// host spends 1.5 us of each wait in the launch call and the rest in its own
// work between calls. The GPU works 40% of the time: the run is
// launch-bound. Replayed as a CUDA graph it takes its GPU time plus 1 us per
// node: every wait goes, less 1 us per kernel, and the replay takes 450 us.
// One finding, with its kernels as a table.
TEST_F(HostRules, LaunchBoundKernels) {
  launch_bound_run();
  auto found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 149 * 3'000);
  EXPECT_EQ(found[0].saving_ns, 149 * 3'000 - 150 * 1'000);
  EXPECT_NE(found[0].what.find("the run is launch-bound: GPU busy 40%"), std::string::npos) << found[0].what;
  EXPECT_EQ(found[0].what.find("most kernels from"), std::string::npos) << "no modules recorded";
  EXPECT_EQ(rows_of(found[0], "kernels").size(), 64u);  // the evidence limit
  EXPECT_NE(found[0].fix.find("CUDA graph"), std::string::npos);
  // The replay's own time: 150 x 2 us of GPU work and 150 x 1 us of nodes.
  EXPECT_NE(found[0].estimate.find("replayed as a CUDA graph, the run takes its GPU time plus that, 450"),
            std::string::npos)
      << found[0].estimate;
  EXPECT_NE(found[0].estimate.find("the saving is from the traced run"), std::string::npos);
  ASSERT_EQ(found[0].details.rows.size(), 10u);
  EXPECT_EQ(found[0].details.rows[0], (std::vector<Cell>{std::string("k0()"), int64_t{2},
                                                         int64_t{2'000}, int64_t{1'500}}));
}

// One kernel launched 150 times, each launch a step of the repeating launch
// sequence: the steps are the loop, and the loop is launch-bound.
TEST_F(HostRules, LaunchBoundLoopOfOneKernel) {
  int64_t d = buffer(AllocKind::Device, 4096);
  for (int i = 0; i < 150; ++i) kernel("tiny", 10'000 + i * 5'000, 2'000, {{d, A::ReadWrite}}, 7, 1'500);
  auto found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].what.find("the step is launch-bound: GPU busy 40%"), std::string::npos) << found[0].what;
}

// A part that launched under 1% of the kernels is left out of the list.
TEST_F(HostRules, LaunchBoundListsNoPartOfUnderOnePercent) {
  launch_bound_run();
  module("Net", 0, 2'000'000, 0);
  module("body", 0, 751'000, 1);
  module("head", 751'000, 2'000'000, 1);  // the last launch alone: 0.7%
  auto found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].what.find("; most kernels from body (99%)"), std::string::npos) << found[0].what;
  EXPECT_EQ(found[0].what.find("head"), std::string::npos) << found[0].what;
}

// XLA autotuning a new shape after the loop: its trial kernels, launched
// while its compile range was open, are not the step's, and the time it
// compiled is not the run's: the finding is the loop's alone.
TEST_F(HostRules, LaunchBoundLeavesTheCompilersTrialsOut) {
  int64_t d = launch_bound_run();
  for (int i = 0; i < 20; ++i) kernel("trial", 770'000 + i * 5'000, 4'000, {{d, A::ReadWrite}}, 7, 1'500);
  xla_compiling(757'000, 870'000);  // from as the loop's last kernel ends
  auto found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  // As without the trials: 150 x 2 us of 747 us, and 149 waits of 3 us.
  EXPECT_NE(found[0].what.find("GPU busy 40% of 747.0 us"), std::string::npos) << found[0].what;
  EXPECT_EQ(found[0].cost_ns, 149 * 3'000);
  EXPECT_NE(found[0].what.find("150 launches"), std::string::npos) << found[0].what;
  for (const auto& row : found[0].details.rows) EXPECT_NE(row[0], Cell(std::string("trial()")));
}

// Four marked steps of 60 launches 5 us apart (the first warm-up); in the
// third XLA compiled a new shape for 2 ms and the host traced it for 3 ms more
// before launching. That step is left out of the step's means: busy 40% of
// 300 us, not 9% of 1.3 ms.
TEST_F(HostRules, LaunchBoundLeavesStepsThatRecompiledOut) {
  int64_t d = buffer(AllocKind::Device, 4096);
  int64_t start = 10'000;
  for (int step = 0; step < 4; ++step) {
    int64_t launches_from = start;
    if (step == 2) {
      xla_compiling(start, start + 2'000'000);
      launches_from += 5'000'000;
    }
    launch_loop(60, launches_from, 5'000, 2'000, 1'500, d);
    testing::NvtxRangeRow range;
    range.name = "step " + std::to_string(step);
    range.start_ns = start;
    range.end_ns = launches_from + 300'000;
    trace.add(range);
    start = launches_from + 300'000;
  }
  auto found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].what.find("GPU busy 40% of 300.0 us per step"), std::string::npos) << found[0].what;
  EXPECT_NE(found[0].what.find("1 in which XLA compiled a new shape left out"), std::string::npos)
      << found[0].what;
  EXPECT_EQ(found[0].steps, 2) << "its cost per step is over the steps it looked at";
}

// Where the trace has PyTorch's module ranges, the finding says which parts
// of the model launched most: the first 90 launches come from inside
// layer1.0.conv, the other 60 from layer2.1, all inside the model (Net).
TEST_F(HostRules, LaunchBoundSaysWhichPartsOfTheModelLaunchMost) {
  launch_bound_run();
  module("Net", 0, 2'000'000, 0);
  module("layer1.0.conv", 0, 456'000, 1);
  module("layer2.1", 456'000, 2'000'000, 1);
  testing::NvtxRangeRow thunk;  // XLA names a range per thunk; PyTorch's emit_nvtx per op
  thunk.name = "conv1";
  thunk.start_ns = 0;
  thunk.end_ns = 20'000;
  trace.add(thunk);
  auto found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].what.find("; most kernels from layer1 (60%), layer2 (40%)"), std::string::npos)
      << found[0].what;
  EXPECT_EQ(found[0].framework, "") << "about the whole step, not its first launch's module";
  EXPECT_EQ(found[0].nvtx, "") << "nor its first launch's NVTX range";
}

// A loss computed in the Python function that called the model (a scope,
// named with its file and line): its forward launches and its backward's
// are one part of the step, the function's name whole, in backward too.
TEST_F(HostRules, LaunchBoundNamesAScopeWholeInItsBackward) {
  launch_bound_run();
  using K = FrameworkRangeKind;
  module("training_step (train.py:18)", 0, 400'000, 0, K::Scope);
  module("aten::nll_loss", 0, 400'000, 1, K::Op, 5);
  module("NllLossBackward0", 400'000, 2'000'000, 0, K::Backward, 5);
  auto found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].what.find("; most kernels from training_step (train.py:18) (100%)"), std::string::npos)
      << found[0].what;
}

// PyTorch's zero_grad(set_to_none=False) fills each gradient with zeros, a
// kernel each, in its scope: 30 of the 150 here. The fix says to set them
// to None instead; a step without that scope is not told.
TEST_F(HostRules, LaunchBoundTellsAZeroGradThatFillsToSetToNone) {
  int64_t d = launch_bound_run();
  block(d, 0, 4096);
  std::string advice = "optimizer.zero_grad(set_to_none=True) (the default): its 30 kernels that fill the "
                       "gradients with zeros go";
  ASSERT_EQ(findings("launch_bound_kernels").size(), 1u);
  EXPECT_EQ(findings("launch_bound_kernels")[0].fix.find("zero_grad"), std::string::npos);
  module("Optimizer.zero_grad#SGD.zero_grad", 0, 158'000, 0, FrameworkRangeKind::Scope);
  auto found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].fix.find(advice), std::string::npos) << found[0].fix;
}

// A container model (nn.Sequential) names its children by index: launches
// from children 0, 1 and 2 (50 each) count as one part of the model.
TEST_F(HostRules, LaunchBoundCountsAContainersChildrenAsOnePart) {
  launch_bound_run();
  module("Sequential", 0, 2'000'000, 0);
  module("0", 0, 256'000, 1);
  module("1", 256'000, 506'000, 1);
  module("2", 506'000, 2'000'000, 1);
  auto found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].what.find("; most kernels from layers 0-2 (100%)"), std::string::npos) << found[0].what;
}

// A tight launch loop: each 2 us launch call ends 4 us before its 1 us
// kernel starts, so the GPU's 4 us waits are mostly the host's own time
// between calls (PyTorch's, between its ops) and only 1 us of each is
// inside a launch call. A CUDA graph removes the host's time between the
// calls too: all of each wait goes, less 1 us per node.
TEST_F(HostRules, LaunchBoundSavesTheHostTimeBetweenLaunchesToo) {
  int64_t d = buffer(AllocKind::Device, 4096);
  launch_loop(100, 10'000, 5'000, 1'000, 2'000, d);
  trace.db().exec("UPDATE api_calls SET start_ns = start_ns - 5000, end_ns = end_ns - 5000 "
                  "WHERE name_id = (SELECT id FROM strings WHERE text = 'cudaLaunchKernel')");
  auto found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 99 * 4'000);
  EXPECT_EQ(found[0].saving_ns, 99 * 4'000 - 100 * 1'000);
}

// The program uploads its input, starts up for 50 ms, runs 100 tiny kernels,
// 0.5 ms later a 0.5 ms one, loads data on the host for 30 ms and runs 100
// more, one of them 5 ms after the previous one. The waits under 1 ms are
// the launches' (the 0.5 ms before the big kernel too: the host's time
// between launches); start-up, the data loading and the 5 ms pause are
// gpu_idle_gap's.
TEST_F(HostRules, LaunchBoundWaitsAreTheGapsShorterThanAnIdleGap) {
  int64_t d = buffer(AllocKind::Device, 1 << 20);
  int64_t h = buffer(AllocKind::PinnedHost, 1 << 20);
  pinned_copy(h, d, 1 << 20, 1'000);
  launch_loop(100, 50'000'000, 5'000, 2'000, 1'000, d);
  kernel("big", 51'000'000, 500'000, {{d, A::ReadWrite}});
  launch_loop(50, 81'500'000, 5'000, 2'000, 1'000, d, 100);
  launch_loop(50, 86'750'000, 5'000, 2'000, 1'000, d, 150);
  auto found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, (99 + 98) * 3'000 + 503'000);
  EXPECT_EQ(found[0].saving_ns, (99 + 98) * 3'000 + 503'000 - 201 * 1'000);
}

// Kernels a graph launch ran (XLA's command buffers, a captured step) are
// never told to use a CUDA graph, and the saving of a larger graph is not
// made up.
TEST_F(HostRules, KernelsInAGraphAreNotToldToUseOne) {
  int64_t d = buffer(AllocKind::Device, 4096);
  launch_loop(100, 10'000, 5'000, 2'000, 1'500, d);
  trace.db().exec("UPDATE kernels SET launch_kind = " + std::to_string(static_cast<int>(LaunchKind::Graph)));
  auto found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].fix.find("cudaStreamBeginCapture"), std::string::npos) << found[0].fix;
  EXPECT_NE(found[0].fix.find("already"), std::string::npos) << found[0].fix;
  EXPECT_FALSE(found[0].saving_ns.has_value());
}

// 100 steps (NVTX "step") of 3 kernels, each launched by a graph, as XLA
// launches its command buffers: jit more of the step into one function.
// Made one graph launch a step (a JAX step jitted whole), the GPU waits on
// the host between the steps, and jitting more is done already: the advice
// is to do more per launch.
TEST_F(HostRules, AStepThatIsOneGraphLaunchIsToldToDoMorePerLaunch) {
  int64_t d = buffer(AllocKind::Device, 4096);
  launch_loop(300, 10'000, 5'000, 2'000, 1'500, d);
  for (int step = 0; step < 100; ++step) {
    testing::NvtxRangeRow range;
    range.name = "step";
    range.start_ns = 5'000 + step * 15'000;
    range.end_ns = 5'000 + (step + 1) * 15'000;
    trace.add(range);
  }
  xla_program(10'000);
  trace.db().exec("UPDATE kernels SET launch_kind = " + std::to_string(static_cast<int>(LaunchKind::Graph)));
  auto found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].what.find("; 3 graph and kernel launches per step"), std::string::npos) << found[0].what;
  EXPECT_NE(found[0].fix.find("jit more of the step"), std::string::npos) << found[0].fix;
  trace.db().exec("UPDATE kernels SET call_correlation_id = (SELECT first.call_correlation_id FROM kernels first "
                  "WHERE first.id = ((kernels.id - 1) / 3) * 3 + 1)");
  found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].what.find("; 1 graph launch per step"), std::string::npos) << found[0].what;
  EXPECT_NE(found[0].fix.find("each step is one graph launch already"), std::string::npos) << found[0].fix;
  EXPECT_NE(found[0].fix.find("jax.lax.scan"), std::string::npos) << found[0].fix;
  EXPECT_EQ(found[0].fix.find("jit more"), std::string::npos) << found[0].fix;
}

// The fix is the framework's: PyTorch where its caching allocator handed
// out blocks, JAX where XLA named its work in NVTX ranges.
TEST_F(HostRules, LaunchBoundAdviceIsTheFrameworks) {
  int64_t d = buffer(AllocKind::Device, 1 << 20);
  launch_loop(100, 10'000, 5'000, 2'000, 1'500, d);
  ASSERT_EQ(findings("launch_bound_kernels").size(), 1u);
  EXPECT_NE(findings("launch_bound_kernels")[0].fix.find("cudaStreamBeginCapture"), std::string::npos);
  xla_program(1'000'000);
  EXPECT_NE(findings("launch_bound_kernels")[0].fix.find("jit the whole step"), std::string::npos);
  block(d, 0, 4096);
  EXPECT_NE(findings("launch_bound_kernels")[0].fix.find("torch.compile(model, mode=\"reduce-overhead\")"),
            std::string::npos);
  EXPECT_NE(findings("launch_bound_kernels")[0].fix.find("fused=True"), std::string::npos);
  // An optimizer fused already is not told to fuse.
  kernel("multi_tensor_apply_kernel<FusedAdamMathFunctor<float>>", 600'000, 2'000, {{d, A::ReadWrite}});
  ASSERT_EQ(findings("launch_bound_kernels").size(), 1u);
  EXPECT_EQ(findings("launch_bound_kernels")[0].fix.find("fused=True"), std::string::npos)
      << findings("launch_bound_kernels")[0].fix;
}

// 150 kernels of 7 us, one every 10 us: the GPU works 70% of the time, more
// than it waits, but its kernels are short and a graph would take 20% off
// the run (3 us a wait, less 1 us a node): launch-bound all the same. Not
// where graphs launched them already; and at 9.5 us each, the waits are
// shorter than a node costs, and nothing is found.
TEST_F(HostRules, ShortKernelsAreLaunchBoundWhereAGraphSavesAShareOfTheRun) {
  int64_t d = buffer(AllocKind::Device, 4096);
  launch_loop(150, 10'000, 10'000, 7'000, 1'500, d);
  auto found = findings("launch_bound_kernels");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].saving_ns, 149 * 3'000 - 150 * 1'000);
  EXPECT_NE(found[0].what.find("GPU busy 70%"), std::string::npos) << found[0].what;
  trace.db().exec("CREATE TABLE kinds AS SELECT id, launch_kind FROM kernels");
  trace.db().exec("UPDATE kernels SET launch_kind = " + std::to_string(static_cast<int>(LaunchKind::Graph)));
  EXPECT_TRUE(findings("launch_bound_kernels").empty()) << "launched by graphs already, and busy most of the time";
  trace.db().exec("UPDATE kernels SET launch_kind = (SELECT launch_kind FROM kinds WHERE kinds.id = kernels.id)");
  trace.db().exec("UPDATE kernels SET gpu_end_ns = gpu_start_ns + 9500");
  EXPECT_TRUE(findings("launch_bound_kernels").empty());
}

TEST_F(HostRules, LongKernelsAreNotLaunchBound) {
  int64_t d = buffer(AllocKind::Device, 4096);
  for (int i = 0; i < 100; ++i) kernel("big", 10'000 + i * 25'000, 20'000, {{d, A::ReadWrite}});
  EXPECT_TRUE(findings("launch_bound_kernels").empty());
}

}  // namespace
}  // namespace apptracer::diagnose
