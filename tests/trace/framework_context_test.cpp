// Which module and op issued a launch (analyzer/trace/framework_context.h):
// framework ranges and calls made by hand, joined by thread and time.
#include <gtest/gtest.h>

#include <string>

#include "analyzer/trace/trace.h"
#include "analyzer/trace/xla_range_names.h"
#include "trace_builder.h"

namespace apptracer::trace {
namespace {

using testing::TraceBuilder;

class FrameworkContextTest : public ::testing::Test {
 protected:
  void range(FrameworkRangeKind kind, const std::string& name, int64_t tid, int64_t depth,
             int64_t start, std::optional<int64_t> end, std::optional<int64_t> seq = std::nullopt) {
    testing::FrameworkRangeRow row;
    row.kind = kind;
    row.name = name;
    row.tid = tid;
    row.depth = depth;
    row.start_ns = start;
    row.end_ns = end;
    row.seq = seq;
    builder_.add(row);
  }
  // A kernel launched on `tid` at `ns`: its call's correlation id.
  int64_t launch(int64_t tid, int64_t ns, const std::string& kernel_name = "_Z6kernelv") {
    testing::ApiCallRow call;
    call.name = "cudaLaunchKernel";
    call.correlation_id = ++correlation_;
    call.tid = tid;
    call.start_ns = ns;
    call.end_ns = ns + 5;
    builder_.add(call);
    testing::KernelRow kernel;
    kernel.mangled_name = kernel_name;
    kernel.call_correlation_id = correlation_;
    kernel.api_start_ns = ns;
    kernel.gpu_start_ns = ns + 10;
    kernel.gpu_end_ns = ns + 20;
    builder_.add(kernel);
    return correlation_;
  }
  // "module/phase/op" of the launch with correlation id `call`.
  std::string context_of(int64_t call) {
    Trace trace(builder_.db());
    FrameworkContext context = trace.framework_contexts().of_call(kSingleProcess, call);
    return std::string(trace.string(context.module_id)) + "/" + std::string(to_string(context.phase)) +
           "/" + std::string(trace.string(context.op_id));
  }

  // "op@start-end" of work issued on `tid` at `ns` (a DVDG op's producer,
  // known by its thread and time).
  std::string op_issued(int64_t tid, int64_t ns) {
    Trace trace(builder_.db());
    FrameworkContext context = trace.framework_contexts().issued(kSingleProcess, tid, ns);
    return std::string(trace.string(context.op_id)) + "@" + std::to_string(context.op_start_ns) + "-" +
           std::to_string(context.op_end_ns);
  }

  // NVTX "step 1" ... "step N", 1,000 ns each from 1,000 ns.
  // Four steps of a trace that recorded 1 op in 4: what the sampled tests
  // fill from other steps.
  void sampled_steps() {
    builder_.set_meta("framework_ranges.op_sample_every", "4");
    steps(4);
  }

  void steps(int count) {
    for (int k = 1; k <= count; ++k) {
      testing::NvtxRangeRow step;
      step.name = "step " + std::to_string(k);
      step.start_ns = 1000 * k;
      step.end_ns = 1000 * k + 999;
      builder_.add(step);
    }
  }

  TraceBuilder builder_;
  int64_t correlation_ = 0;
};

TEST_F(FrameworkContextTest, AForwardLaunchHasItsInnermostModuleAndOp) {
  using K = FrameworkRangeKind;
  range(K::Module, "ResNet", 1, 0, 100, 1000);
  range(K::Module, "layer1.0.conv2", 1, 1, 200, 400);
  range(K::Op, "aten::conv2d", 1, 0, 210, 390, 5);
  range(K::Op, "aten::convolution", 1, 1, 220, 380, 5);
  range(K::Op, "aten::cudnn_convolution", 1, 2, 230, 370, 6);
  range(K::Module, "layer1.0.bn1", 1, 1, 420, 480);
  int64_t conv = launch(1, 300);
  int64_t bn = launch(1, 450);
  int64_t root = launch(1, 490);
  int64_t outside = launch(1, 2000);
  int64_t other_thread = launch(2, 300);
  EXPECT_EQ(context_of(conv), "layer1.0.conv2/forward/aten::cudnn_convolution");
  EXPECT_EQ(context_of(bn), "layer1.0.bn1/forward/");
  EXPECT_EQ(context_of(root), "ResNet/forward/") << "a finished child is not the module";
  EXPECT_EQ(context_of(outside), "//");
  EXPECT_EQ(context_of(other_thread), "//");
}

// In backward, a launch belongs to the module whose forward created the
// autograd node: the last forward op that started with the node's sequence
// number ran in it (ops after the node's creation see the next number).
TEST_F(FrameworkContextTest, ABackwardLaunchHasTheModuleThatCreatedItsNode) {
  using K = FrameworkRangeKind;
  range(K::Module, "ResNet", 1, 0, 100, 1000);
  range(K::Module, "conv1", 1, 1, 200, 300);
  range(K::Op, "aten::empty", 1, 0, 210, 215, 5);  // before the node: same number
  range(K::Module, "fc", 1, 1, 400, 500);
  range(K::Op, "aten::empty", 1, 0, 401, 402, 5);   // a module's op that makes no node ...
  range(K::Op, "aten::linear", 1, 0, 410, 490, 5);  // ... and the one that makes node 5
  range(K::Backward, "AddmmBackward0", 2, 0, 2000, 2500, 5);
  range(K::Op, "aten::mm", 2, 0, 2100, 2200, 9);
  range(K::Backward, "UnknownBackward", 2, 0, 2600, 2700, 77);
  int64_t mm = launch(2, 2150);
  int64_t in_node = launch(2, 2300);
  int64_t unknown = launch(2, 2650);
  EXPECT_EQ(context_of(mm), "fc/backward/aten::mm");
  EXPECT_EQ(context_of(in_node), "fc/backward/AddmmBackward0");
  EXPECT_EQ(context_of(unknown), "//UnknownBackward");
}

TEST_F(FrameworkContextTest, OutsideModulesANamedScopeIsTheModule) {
  using K = FrameworkRangeKind;
  range(K::Scope, "Optimizer.step#SGD.step", 1, 0, 3000, 3500);
  range(K::Op, "aten::_foreach_add_", 1, 0, 3100, 3200);
  range(K::Module, "still_open", 1, 0, 5000, std::nullopt);
  EXPECT_EQ(context_of(launch(1, 3150)), "Optimizer.step#SGD.step/scope/aten::_foreach_add_");
  EXPECT_EQ(context_of(launch(1, 9000)), "still_open/forward/") << "open until the trace ends";
}

// A loss computed outside the model, in the Python function that called it
// (a scope): its forward launches are that scope's, and its backward's the
// scope's backward, through the node the loss's op made there. Inside the
// model, the module still wins.
TEST_F(FrameworkContextTest, ALossOutsideTheModelIsItsFunctionsInForwardAndBackward) {
  using K = FrameworkRangeKind;
  range(K::Scope, "training_step (train.py:18)", 1, 0, 100, 1000);
  range(K::Module, "fc", 1, 0, 150, 250);
  range(K::Op, "aten::addmm", 1, 0, 160, 240, 4);
  range(K::Op, "aten::nll_loss", 1, 0, 300, 400, 5);
  range(K::Backward, "NllLossBackward0", 2, 0, 2000, 2100, 5);
  range(K::Backward, "AddmmBackward0", 2, 0, 2200, 2300, 4);
  int64_t in_model = launch(1, 200);
  int64_t loss = launch(1, 350);
  int64_t loss_backward = launch(2, 2050);
  int64_t model_backward = launch(2, 2250);
  EXPECT_EQ(context_of(in_model), "fc/forward/aten::addmm");
  EXPECT_EQ(context_of(loss), "training_step (train.py:18)/scope/aten::nll_loss");
  EXPECT_EQ(context_of(loss_backward), "training_step (train.py:18)/backward/NllLossBackward0");
  EXPECT_EQ(context_of(model_backward), "fc/backward/AddmmBackward0");
}

// How long a thread ran inside scopes of a name in a window: the one that
// began before the window counts from its start, those inside whole, the
// one it ends in to its end; another name's scope around them not at all.
TEST_F(FrameworkContextTest, TimeInScopesCountsWhatLiesInTheWindow) {
  using K = FrameworkRangeKind;
  range(K::Scope, "main (train.py:3)", 1, 0, 0, 10'000);
  for (int64_t start : {1'000, 3'000, 5'000}) {
    range(K::Scope, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1, 1, start, start + 1'000);
  }
  launch(1, 9'000);
  Trace trace(builder_.db());
  const TraceOperations& ops = trace.operations();
  EXPECT_EQ(ops.time_in_scopes(kSingleProcess, 1, 1'500, 5'200, "enumerate(DataLoader)#"), 500 + 1'000 + 200);
  EXPECT_EQ(ops.time_in_scopes(kSingleProcess, 1, 1'500, 5'200, "main"), 3'700);
  EXPECT_EQ(ops.time_in_scopes(kSingleProcess, 2, 1'500, 5'200, "main"), 0) << "another thread";
  EXPECT_EQ(ops.time_in_scopes(kSingleProcess, 1, 6'000, 8'000, "enumerate(DataLoader)#"), 0);
}

TEST_F(FrameworkContextTest, ATraceWithoutRangesAttributesNothing) {
  int64_t call = launch(1, 300);
  Trace trace(builder_.db());
  EXPECT_FALSE(trace.framework_contexts().recorded());
  EXPECT_EQ(trace.framework_contexts().of_call(kSingleProcess, call).module_id, 0);
}

TEST_F(FrameworkContextTest, ATraceFromBeforeTheTableAttributesNothing) {
  int64_t call = launch(1, 300);
  builder_.db().exec("DROP TABLE framework_ranges");
  Trace trace(builder_.db());
  EXPECT_FALSE(trace.framework_contexts().recorded());
  EXPECT_EQ(trace.framework_contexts().of_call(kSingleProcess, call).op_id, 0);
}

// A trace that recorded 1 in N ops: a launch takes the op recorded at its
// place (its kernel, its count among its thread's launches in its step) in
// another step, the innermost one any step recorded, and in backward the
// module.
TEST_F(FrameworkContextTest, SampledOpsAreNamedFromTheSameLaunchInOtherSteps) {
  using K = FrameworkRangeKind;
  sampled_steps();
  std::vector<int64_t> a, b, c;
  for (int64_t k = 1; k <= 4; ++k) {
    int64_t base = 1000 * k;
    range(K::Module, "Net", 1, 0, base + 10, base + 500);
    a.push_back(launch(1, base + 100, "_Z1av"));
    b.push_back(launch(1, base + 300, "_Z1bv"));
    c.push_back(launch(2, base + 700, "_Z1cv"));  // the backward's, on its own thread
  }
  range(K::Op, "aten::linear", 1, 0, 1050, 1200);  // step 1: the outer op only
  range(K::Op, "aten::addmm", 1, 0, 2090, 2150, 7);  // step 2: the inner one ...
  range(K::Op, "aten::relu", 1, 0, 2250, 2350);
  range(K::Backward, "AddmmBackward0", 2, 0, 2650, 2750, 7);  // ... and its node
  EXPECT_EQ(context_of(a[2]), "Net/forward/aten::addmm");
  EXPECT_EQ(context_of(b[2]), "Net/forward/aten::relu");
  EXPECT_EQ(context_of(a[0]), "Net/forward/aten::addmm") << "the inner op, not the one around it";
  EXPECT_EQ(context_of(c[3]), "Net/backward/AddmmBackward0");
  Trace trace(builder_.db());
  EXPECT_EQ(trace.framework_contexts().from_other_steps(), 9u)
      << "all but step 2's own a, b and c";
  EXPECT_EQ(op_issued(1, 3100), "aten::addmm@3090-3150");
}

// A backward node whose forward op was recorded only in other steps: each
// steady step uses 5 sequence numbers here, so the op that made node 25 in
// step 3 is the one numbered 15 in step 1.
TEST_F(FrameworkContextTest, ASampledBackwardNodeFindsItsModuleFromTheStepsPeriod) {
  using K = FrameworkRangeKind;
  sampled_steps();
  std::vector<int64_t> backward;
  for (int64_t k = 1; k <= 4; ++k) {
    int64_t base = 1000 * k;
    range(K::Module, "fc", 1, 0, base + 10, base + 100);
    range(K::Module, "act", 1, 0, base + 110, base + 200);
    launch(1, base + 50, "_Z1av");
    backward.push_back(launch(2, base + 700, "_Z1bv"));
  }
  range(K::Op, "aten::linear", 1, 0, 1020, 1090, 15);  // fc's op: 10 + 5k
  range(K::Op, "aten::relu", 1, 0, 2120, 2190, 22);    // act's: 12 + 5k, in two steps
  range(K::Op, "aten::relu", 1, 0, 3120, 3190, 27);
  range(K::Backward, "AddmmBackward0", 2, 0, 3650, 3750, 25);
  EXPECT_EQ(context_of(backward[2]), "fc/backward/AddmmBackward0");
  EXPECT_EQ(context_of(backward[3]), "fc/backward/AddmmBackward0") << "and from there to the other steps";
}

// An op that makes no node carries the number of the next node made: the
// last op of one module and the op of the next that makes the node share
// it. Recorded in different steps, both claim the number; the node's type
// names its op (AddmmBackward0, aten::addmm), and so its module.
TEST_F(FrameworkContextTest, ANumberTwoModulesClaimGoesToTheOpTheNodeNames) {
  using K = FrameworkRangeKind;
  sampled_steps();
  std::vector<int64_t> backward;
  for (int64_t k = 1; k <= 4; ++k) {
    int64_t base = 1000 * k;
    range(K::Module, "norm", 1, 0, base + 10, base + 100);
    range(K::Module, "fc", 1, 0, base + 110, base + 200);
    launch(1, base + 50, "_Z1av");
    backward.push_back(launch(2, base + 700, "_Z1bv"));
  }
  range(K::Op, "aten::view", 1, 0, 1020, 1030, 15);    // norm's last op, no node: 10 + 5k
  range(K::Op, "aten::addmm", 1, 0, 2120, 2190, 20);   // fc's, making node 10 + 5k
  range(K::Op, "aten::addmm", 1, 0, 4120, 4190, 30);
  range(K::Backward, "AddmmBackward0", 2, 0, 3650, 3750, 25);
  EXPECT_EQ(context_of(backward[2]), "fc/backward/AddmmBackward0");
}

// Autograd's engine sums a broadcast input's gradient down and casts it back
// after the node that made it returns, outside every node: such a launch is
// the backward of the module whose node ran just before it. One a node held
// in some step stays that node's, even where its module is unknown.
TEST_F(FrameworkContextTest, AutogradsWorkBetweenNodesIsTheBackwardOfTheNodeBefore) {
  using K = FrameworkRangeKind;
  sampled_steps();
  std::vector<int64_t> in_node, between, other_node;
  for (int64_t k = 1; k <= 4; ++k) {
    int64_t base = 1000 * k;
    range(K::Module, "fc", 1, 0, base + 10, base + 100);
    launch(1, base + 50, "_Z1av");
    in_node.push_back(launch(2, base + 600, "_Z2mmv"));
    between.push_back(launch(2, base + 700, "_Z3sumv"));
    other_node.push_back(launch(2, base + 800, "_Z5embedv"));
  }
  range(K::Op, "aten::addmm", 1, 0, 2020, 2090, 7);
  range(K::Backward, "AddmmBackward0", 2, 0, 2550, 2650, 7);  // step 2: the node, its sum after it
  range(K::Backward, "EmbeddingBackward0", 2, 0, 3750, 3850, 99);  // no forward op with its number
  EXPECT_EQ(context_of(in_node[0]), "fc/backward/AddmmBackward0");
  EXPECT_EQ(context_of(between[0]), "fc/backward/") << "the engine's work after the node";
  EXPECT_EQ(context_of(between[3]), "fc/backward/");
  EXPECT_EQ(context_of(other_node[0]), "//EmbeddingBackward0") << "inside a node of no known module";
}

// Every op and node recorded: work after a node returns, before the next
// one, on autograd's thread is that node's module's backward; work on a
// thread that runs no node is nobody's, and neither is work outside modules
// on a thread that runs forwards too (a CPU tensor's backward runs on the
// caller's thread, which then computes the next loss).
TEST_F(FrameworkContextTest, InAFullRecordingWorkBetweenNodesIsTheBackwardOfTheNodeBefore) {
  using K = FrameworkRangeKind;
  range(K::Module, "fc", 1, 0, 100, 200);
  range(K::Op, "aten::addmm", 1, 1, 110, 190, 7);
  range(K::Backward, "AddmmBackward0", 2, 0, 500, 600, 7);
  range(K::Backward, "MulBackward0", 1, 0, 300, 400, 7);
  int64_t in_node = launch(2, 550);
  int64_t between = launch(2, 650);
  int64_t main_thread = launch(1, 700);
  EXPECT_EQ(context_of(in_node), "fc/backward/AddmmBackward0");
  EXPECT_EQ(context_of(between), "fc/backward/");
  EXPECT_EQ(context_of(main_thread), "//");
}

// A step that took another path (an extra launch first) shifts its launches'
// places: they are named only where the same kernel ran at the same place,
// and the other steps keep theirs.
TEST_F(FrameworkContextTest, AStepThatTookAnotherPathLeavesTheOthersNamed) {
  using K = FrameworkRangeKind;
  sampled_steps();
  std::vector<int64_t> a, b;
  for (int64_t k = 1; k <= 4; ++k) {
    int64_t base = 1000 * k;
    if (k == 3) launch(1, base + 50, "_Z5extrav");
    a.push_back(launch(1, base + 100, "_Z1av"));
    b.push_back(launch(1, base + 300, "_Z1bv"));
  }
  range(K::Op, "aten::addmm", 1, 0, 1050, 1200);
  range(K::Op, "aten::relu", 1, 0, 2250, 2350);
  EXPECT_EQ(context_of(a[3]), "//aten::addmm");
  EXPECT_EQ(context_of(b[3]), "//aten::relu");
  EXPECT_EQ(context_of(a[2]), "//") << "step 3's a is at another place: b's";
  EXPECT_EQ(context_of(b[2]), "//");
}

// Work that runs in few steps or outside them (an evaluation every few
// steps, or after the last) has no place the steps recorded: it takes the
// op recorded at its place in another call of the module or scope around
// it, where the same kernel ran as many launches after the range began.
TEST_F(FrameworkContextTest, WorkOutsideTheStepsIsNamedFromOtherCallsOfItsModuleOrScope) {
  using K = FrameworkRangeKind;
  sampled_steps();
  for (int64_t k = 1; k <= 4; ++k) {
    int64_t base = 1000 * k;
    range(K::Module, "net.0", 1, 0, base + 10, base + 400);
    launch(1, base + 100, "_Z4gemmv");
    launch(1, base + 200, "_Z4biasv");
  }
  range(K::Op, "aten::addmm", 1, 0, 2090, 2150);  // recorded in step 2 only
  range(K::Op, "aten::add", 1, 0, 3190, 3250);    // and step 3
  // After the last step: an evaluation scope calling the module twice, then
  // a kernel of its own; the scope's first call recorded its op.
  std::vector<int64_t> gemm, bias, softmax;
  for (int64_t k = 0; k < 2; ++k) {
    int64_t base = 6000 + 1000 * k;
    range(K::Scope, "validation_step (train.py:25)", 1, 0, base, base + 900);
    range(K::Module, "net.0", 1, 0, base + 10, base + 400);
    gemm.push_back(launch(1, base + 100, "_Z4gemmv"));
    bias.push_back(launch(1, base + 200, "_Z4biasv"));
    softmax.push_back(launch(1, base + 500, "_Z7softmaxv"));
  }
  range(K::Op, "aten::_log_softmax", 1, 0, 6490, 6550);
  int64_t other_kernel = launch(1, 8100, "_Z5otherv");
  range(K::Module, "net.0", 1, 0, 8010, 8400);
  EXPECT_EQ(context_of(gemm[1]), "net.0/forward/aten::addmm");
  EXPECT_EQ(context_of(bias[0]), "net.0/forward/aten::add");
  EXPECT_EQ(context_of(softmax[1]), "validation_step (train.py:25)/scope/aten::_log_softmax")
      << "counted from the scope's start: the module's launches before it count";
  EXPECT_EQ(context_of(other_kernel), "net.0/forward/") << "another kernel at the place names nothing";
  Trace trace(builder_.db());
  EXPECT_EQ(trace.framework_contexts().from_other_calls(), 5u)
      << "the evaluation's two gemms, two biases and second softmax";
  EXPECT_EQ(op_issued(1, 7100), "aten::addmm@7090-7150");
}

// A graph launch's kernels share its call: each has its own place, each
// counts as a launch named from other steps, and the call, looked up by its
// correlation id or by its thread and start, is named as its first kernel.
TEST_F(FrameworkContextTest, AGraphLaunchsKernelsShareTheNameOfTheirCall) {
  using K = FrameworkRangeKind;
  sampled_steps();
  std::vector<int64_t> graph;
  for (int64_t k = 1; k <= 4; ++k) {
    int64_t base = 1000 * k;
    range(K::Module, "Net", 1, 0, base + 10, base + 500);
    graph.push_back(launch(1, base + 100, "_Z1av"));
    testing::KernelRow second;
    second.mangled_name = "_Z1bv";
    second.call_correlation_id = graph.back();
    second.api_start_ns = base + 100;
    second.gpu_start_ns = base + 30;
    second.gpu_end_ns = base + 40;
    builder_.add(second);
  }
  range(K::Op, "aten::addmm", 1, 0, 2090, 2150);
  EXPECT_EQ(context_of(graph[0]), "Net/forward/aten::addmm");
  EXPECT_EQ(context_of(graph[3]), "Net/forward/aten::addmm");
  Trace trace(builder_.db());
  EXPECT_EQ(trace.framework_contexts().from_other_steps(), 6u) << "both kernels of steps 1, 3 and 4";
  EXPECT_EQ(op_issued(1, 4100), "aten::addmm@4090-4150");
}

TEST_F(FrameworkContextTest, AnUnsampledTraceNamesOnlyWhatItRecorded) {
  using K = FrameworkRangeKind;
  steps(2);
  int64_t recorded = launch(1, 1100, "_Z1av");
  int64_t unrecorded = launch(1, 2100, "_Z1av");
  range(K::Op, "aten::addmm", 1, 0, 1050, 1200);
  EXPECT_EQ(context_of(recorded), "//aten::addmm");
  EXPECT_EQ(context_of(unrecorded), "//");
}

// A JAX program records no framework ranges; XLA's NVTX ranges say the
// same: the executable (the jitted function) a scope, a thunk's op, and the
// flax module its source path names, forward or (transposed) backward.
TEST_F(FrameworkContextTest, XlasRangesNameAJaxProgramsModulesAndOps) {
  auto nvtx = [&](const std::string& name, int64_t depth, int64_t start, int64_t end) {
    testing::NvtxRangeRow row;
    row.name = name;
    row.tid = 1;
    row.depth = depth;
    row.start_ns = start;
    row.end_ns = end;
    builder_.add(row);
  };
  nvtx("XlaModule:#hlo_module=jit_train_step,program_id=7#", 0, 100, 1000);
  nvtx("Thunk:#name=jit(train_step)/jvp(CNN)/Conv_0/conv_general_dilated,hlo_op=cudnn-conv.1,"
       "unique_hlo_op_id=3#", 1, 200, 300);
  nvtx("Thunk:#name=jit(train_step)/transpose(jvp(CNN))/Conv_1/conv_general_dilated,"
       "hlo_op=cudnn-conv-bw-input.2,unique_hlo_op_id=9#", 1, 400, 500);
  nvtx("Thunk:#hlo_op=command_buffer_1#", 1, 600, 700);
  int64_t forward = launch(1, 250);
  int64_t backward = launch(1, 450);
  int64_t graph = launch(1, 650);
  int64_t outside = launch(1, 1500);
  {
    Trace trace(builder_.db());
    EXPECT_TRUE(has_framework_ranges(trace));
  }
  EXPECT_EQ(context_of(forward), "CNN/Conv_0/forward/conv_general_dilated");
  EXPECT_EQ(context_of(backward), "CNN/Conv_1/backward/conv_general_dilated");
  EXPECT_EQ(context_of(graph), "jit_train_step/scope/command_buffer_1");
  EXPECT_EQ(context_of(outside), "//");
}

TEST(XlaRangeNames, EachPartOfANameIsReadOrLeftOut) {
  std::optional<XlaRange> executable = parse_xla_range("XlaModule:#hlo_module=jit_step,program_id=12#");
  ASSERT_TRUE(executable);
  EXPECT_EQ(executable->kind, XlaRange::Kind::Executable);
  EXPECT_EQ(executable->name, "jit_step");
  // A primitive's parameters may hold commas and slashes; wrappers with no
  // module of their own (vmap) and functions (jit) name none.
  std::optional<XlaRange> op = parse_xla_range(
      "Thunk:#name=jit(step)/vmap(jvp(Block))/Dense_0/reduce_sum[axes=(0,1)/x],hlo_op=fusion.3,unique_hlo_op_id=5#");
  ASSERT_TRUE(op);
  EXPECT_EQ(op->name, "reduce_sum[axes=(0,1)/x]");
  EXPECT_EQ(op->module, "Dense_0");
  EXPECT_EQ(parse_xla_range("Thunk:#name=jit(step)/jvp()/div,hlo_op=loop_multiply_fusion#")->module, "");
  EXPECT_EQ(parse_xla_range("Thunk:#name=jit(step),hlo_op=loop_add_fusion.4,unique_hlo_op_id=1#")->name,
            "loop_add_fusion.4");
  EXPECT_EQ(parse_xla_range("Thunk:#hlo_op=copy.1,unique_hlo_op_id=4294967297#")->name, "copy.1");
  EXPECT_FALSE(parse_xla_range("step 3"));
  EXPECT_FALSE(parse_xla_range("XlaCompile:#module=jit_step#"));
  EXPECT_FALSE(parse_xla_range("Thunk:#"));
}

}  // namespace
}  // namespace apptracer::trace
