// What-if: a module's activations recomputed instead of kept
// (analyzer/memory/checkpoint_whatif.h), on a forward and backward with
// framework context worked out by hand.
#include "memory_fixture.h"

#include "analyzer/memory/checkpoint_whatif.h"
#include "analyzer/memory/producers.h"

namespace apptracer::memory {
namespace {

using A = AccessKind;

// GPU 0, a PyTorch segment; forward on thread 1, backward on thread 2.
// model.block's forward (1000 to 2000) makes A1 (2000 B) and A2 (3000 B)
// from the input X (1000 B, made by model's embed) and its output Out
// (500 B, read by the loss); model.head's forward (3000 to 4000) makes H
// (4000 B). Backward: head_grad reads H (19000), fc2_grad reads A2 (20100),
// fc1_grad reads A1 and X (21000). Live as recorded: 10500 B at 3000 (X,
// A1, A2, Out, H). Checkpointing model.block frees A1 and A2 after the
// forward last uses them (1550, 1750) and makes them again when its
// backward begins (fc2_grad at 20200): the most live is then 6500 B in its
// forward (X, A1, A2, Out), and the forward's three kernels (50 ns each)
// run again.
class CheckpointedBlock : public MemoryTest {
 protected:
  void SetUp() override {
    module("model", 0, 0, 10000);
    module("model.block", 1, 1000, 2000);
    module("model.head", 1, 3000, 4000);
    forward_op("aten::fc1", 1150, 1250, 10);
    forward_op("aten::fc2", 1550, 1650, 11);
    forward_op("aten::head", 3050, 3150, 12);
    backward_node("HeadBackward0", 18900, 19400, 12);
    backward_node("Fc2Backward0", 20000, 20500, 11);
    backward_node("Fc1Backward0", 20900, 21500, 10);
    int64_t segment = allocation(AllocKind::Device, 1 << 20, 0);
    x = block(segment, 0, 1000, 500, 23000, 23000);
    a1 = block(segment, 4096, 2000, 1100, 22000, 22000);
    a2 = block(segment, 8192, 3000, 1300, 22000, 22000);
    out = block(segment, 16384, 500, 1500, 7000, 7000);
    h = block(segment, 32768, 4000, 3000, 19500, 19500);
    issued("embed", 1, 600, {{segment, A::Write, 0}});
    issued("fc1", 1, 1200, {{segment, A::Read, 0}, {segment, A::Write, 4096}});
    issued("act", 1, 1400, {{segment, A::Read, 4096}, {segment, A::Write, 8192}});
    issued("fc2", 1, 1600, {{segment, A::Read, 8192}, {segment, A::Write, 16384}});
    issued("head", 1, 3100, {{segment, A::Write, 32768}});
    issued("loss", 1, 6000, {{segment, A::Read, 16384}});
    issued("head_grad", 2, 19000, {{segment, A::Read, 32768}});
    issued("fc2_grad", 2, 20100, {{segment, A::Read, 8192}});
    issued("fc1_grad", 2, 21000, {{segment, A::Read, 4096}, {segment, A::Read, 0}});
  }

  void range(FrameworkRangeKind kind, const std::string& name, int64_t tid, int64_t depth, int64_t start,
             int64_t end, std::optional<int64_t> seq) {
    testing::FrameworkRangeRow row;
    row.kind = kind;
    row.name = name;
    row.tid = tid;
    row.depth = depth;
    row.start_ns = start;
    row.end_ns = end;
    row.seq = seq;
    trace.add(row);
  }
  void module(const std::string& name, int64_t depth, int64_t start, int64_t end) {
    range(FrameworkRangeKind::Module, name, 1, depth, start, end, std::nullopt);
  }
  void forward_op(const std::string& name, int64_t start, int64_t end, int64_t seq) {
    range(FrameworkRangeKind::Op, name, 1, 0, start, end, seq);
  }
  void backward_node(const std::string& name, int64_t start, int64_t end, int64_t seq) {
    range(FrameworkRangeKind::Backward, name, 2, 0, start, end, seq);
  }
  // A kernel launched from thread `tid` at `issue_ns`, running 50 ns.
  void issued(const std::string& name, int64_t tid, int64_t issue_ns, std::vector<Arg> args) {
    testing::ApiCallRow call;
    call.name = "cudaLaunchKernel";
    call.correlation_id = next_call_;
    call.tid = tid;
    call.start_ns = issue_ns;
    call.end_ns = issue_ns + 10;
    trace.add(call);
    int64_t id = kernel(name, issue_ns, 50, std::move(args));
    Statement attach = trace.db().prepare("UPDATE kernels SET call_correlation_id = ? WHERE id = ?");
    attach.bind(1, next_call_++).bind(2, id).run();
  }

  int64_t x = 0, a1 = 0, a2 = 0, out = 0, h = 0;

 private:
  int64_t next_call_ = 1000;
};

TEST_F(CheckpointedBlock, TheBlocksActivationsAreNotHeldBetweenForwardAndBackward) {
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  std::vector<CheckpointWhatIf> answers = checkpoint_what_if(opened, graph, built, "model.block");
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].device->device, 0);
  EXPECT_EQ(answers[0].peak_live_bytes, 10500);
  EXPECT_EQ(answers[0].peak_if_checkpointed, 6500);
  EXPECT_EQ(answers[0].pieces, 2);
  EXPECT_EQ(answers[0].forward_gpu_ns, 150);
  EXPECT_EQ(answers[0].steps, 0);
  EXPECT_EQ(answers[0].recompute_ns_per_step(), 150);
}

// The live set's producers say which module and op issued them: A1 was
// written by fc1 in model.block's forward; X by embed, in model's forward
// but outside any op.
TEST_F(CheckpointedBlock, ProducersNameTheModuleAndOpThatIssuedThem) {
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  Producers producers(opened);
  Producer made_a1 = producers.of(graph, item(built, MemoryItem::Kind::Block, a1).producer);
  EXPECT_EQ(made_a1.name, "fc1()");
  EXPECT_EQ(made_a1.module, "model.block (forward)");
  EXPECT_EQ(made_a1.op, "aten::fc1");
  Producer made_x = producers.of(graph, item(built, MemoryItem::Kind::Block, x).producer);
  EXPECT_EQ(made_x.name, "embed()");
  EXPECT_EQ(made_x.module, "model (forward)");
  EXPECT_EQ(made_x.op, "");
}

// The whole model, its submodules' work included: X, A1, A2 and H, made by
// its forward and last read in its backward, are recomputed; Out, last
// read by the loss in the forward, is not. Its forward is six kernels.
TEST_F(CheckpointedBlock, ASubmodulesWorkIsItsParents) {
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  std::vector<CheckpointWhatIf> answers = checkpoint_what_if(opened, graph, built, "model");
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].pieces, 4);
  EXPECT_EQ(answers[0].forward_gpu_ns, 6 * 50);
}

TEST_F(CheckpointedBlock, AModuleNotInTheTraceHasNoAnswer) {
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  EXPECT_TRUE(checkpoint_what_if(opened, graph, built, "model.bloc").empty());
}

}  // namespace
}  // namespace apptracer::memory
