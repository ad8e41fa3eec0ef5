// Which module and op issued a launch (analyzer/trace/framework_context.h):
// framework ranges and calls made by hand, joined by thread and time.
#include <gtest/gtest.h>

#include <string>

#include "analyzer/trace/trace.h"
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
  int64_t launch(int64_t tid, int64_t ns) {
    testing::ApiCallRow call;
    call.name = "cudaLaunchKernel";
    call.correlation_id = ++correlation_;
    call.tid = tid;
    call.start_ns = ns;
    call.end_ns = ns + 5;
    builder_.add(call);
    testing::KernelRow kernel;
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

}  // namespace
}  // namespace apptracer::trace
