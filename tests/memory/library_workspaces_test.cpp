// cuBLAS's and cuDNN's workspaces (analyzer/memory/library_workspaces.h):
// recognized from the framework op that allocated them, or the kernel issued
// next, with what used them and how long they lived; their own owners at
// the peak, whatever allocator made them.
#include "memory_fixture.h"

#include "analyzer/memory/library_workspaces.h"
#include "analyzer/memory/memory_whatif.h"
#include "apptracer/schema.h"

namespace apptracer::memory {
namespace {

using A = AccessKind;
using Kind = MemoryItem::Kind;

constexpr const char* kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_cublas";
constexpr const char* kConv = "sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc";
constexpr const char* kRelu = "void at::native::vectorized_elementwise_kernel<4, at::native::relu>";

TEST(KernelLibrary, NamesSayWhichLibraryAKernelIsOf) {
  EXPECT_EQ(kernel_library(kGemm), Owner::CublasWorkspace);
  EXPECT_EQ(kernel_library("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN"), Owner::CublasWorkspace);
  EXPECT_EQ(kernel_library("void splitKreduce_kernel<32, 16, int, float, float>"), Owner::CublasWorkspace);
  EXPECT_EQ(kernel_library("ampere_sgemm_128x64_tn"), Owner::CublasWorkspace);
  EXPECT_EQ(kernel_library(kConv), Owner::CudnnWorkspace);
  EXPECT_EQ(kernel_library("void cudnn::engines_precompiled::nchwToNhwcKernel<float>"), Owner::CudnnWorkspace);
  EXPECT_EQ(kernel_library(kRelu), std::nullopt);
  EXPECT_EQ(kernel_library("my_gemm_kernel"), std::nullopt);
  EXPECT_EQ(op_library("aten::addmm"), Owner::CublasWorkspace);
  EXPECT_EQ(op_library("aten::cudnn_convolution"), Owner::CudnnWorkspace);
  EXPECT_EQ(op_library("aten::add_"), std::nullopt);
}

// A PyTorch step on thread 1 with framework context: aten::addmm (1000 to
// 2000) hands out its output Y and, on its first use of the stream,
// cuBLAS's workspace W (kept for the run; no launch argument shows it);
// aten::cudnn_convolution (3000 to 4000) hands out its output C and a
// workspace T released before it returns; aten::bmm (5000 to 6000) reads Y
// and writes Z. Y is the addmm's output though only cuBLAS kernels touch
// it: it outlives its op and the step.
class WorkspacesWithFrameworkContext : public MemoryTest {
 protected:
  void SetUp() override {
    op("aten::addmm", 1000, 2000);
    op("aten::cudnn_convolution", 3000, 4000);
    op("aten::bmm", 5000, 6000);
    op("aten::relu", 7000, 8000);
    segment = allocation(AllocKind::Device, 1 << 20, 0);
    y = block(segment, 0, 4096, 1100, 9000, 9000);
    w = block(segment, 8192, 32768, 1200);
    c = block(segment, 65536, 8192, 3100, 9500, 9500);
    t = block(segment, 131072, 16384, 3200, 3900, 3900);
    z = block(segment, 262144, 4096, 5100, 9800, 9800);
    kernel(kGemm, 1300, 100, {{segment, A::Write, 0}});
    kernel(kConv, 3300, 100, {{segment, A::Write, 65536}, {segment, A::ReadWrite, 131072}});
    kernel(kGemm, 5300, 100, {{segment, A::Read, 0}, {segment, A::Write, 262144}});
    kernel(kRelu, 7300, 100, {{segment, A::Read, 65536}, {segment, A::Read, 262144}});
  }
  void op(const std::string& name, int64_t start, int64_t end) {
    trace.add_framework_range(FrameworkRangeKind::Op, name, start, end);
  }
  int64_t segment = 0, y = 0, w = 0, c = 0, t = 0, z = 0;
};

TEST_F(WorkspacesWithFrameworkContext, TheLibrariesBlocksAreTheirWorkspaces) {
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  EXPECT_EQ(item(built, Kind::Block, w).owner, Owner::CublasWorkspace);
  EXPECT_EQ(item(built, Kind::Block, t).owner, Owner::CudnnWorkspace);
  EXPECT_EQ(item(built, Kind::Block, y).owner, Owner::FrameworkTensors);
  EXPECT_EQ(item(built, Kind::Block, c).owner, Owner::FrameworkTensors);
  EXPECT_EQ(item(built, Kind::Block, z).owner, Owner::FrameworkTensors);
}

TEST_F(WorkspacesWithFrameworkContext, AtThePeakTheWorkspaceIsCuBlassAndStillTheAllocatorsBlock) {
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  const DeviceMemory& gpu = device(built, 0);
  // The most live: while the convolution holds its workspace.
  EXPECT_EQ(gpu.at_ns, 3200);
  EXPECT_EQ(owner_bytes(gpu, Owner::CublasWorkspace), 32768);
  EXPECT_EQ(owner_bytes(gpu, Owner::CudnnWorkspace), 16384);
  EXPECT_EQ(owner_bytes(gpu, Owner::FrameworkTensors), 4096 + 8192);
  // torch.cuda.memory_allocated() counts the workspace: it is a block.
  EXPECT_EQ(state_at(gpu.points, 6000, true).framework, 4096 + 32768 + 8192 + 4096);
  // Workspaces keep their lifetimes when everything else is freed at last use.
  MemoryWhatIf whatif = memory_what_if(opened, built, gpu);
  EXPECT_EQ(whatif.freed_at_last_use, 32768 + 16384 + 4096 + 8192);
}

// Without framework context: a block handed out just before a cuBLAS
// kernel and kept to the end is cuBLAS's; one released before any kernel
// but cuDNN's ran is cuDNN's; one handed out before the program's own
// kernel stays the program's (its data).
TEST_F(MemoryTest, WithoutFrameworkContextTheNextKernelSaysWhoseItIs) {
  int64_t segment = allocation(AllocKind::Device, 1 << 20, 0);
  int64_t kept = block(segment, 0, 4096, 1000);
  kernel(kGemm, 1100, 100, {});
  int64_t scratch = block(segment, 8192, 4096, 2000, 2500, 2500);
  kernel(kConv, 2100, 100, {{segment, A::ReadWrite, 8192}});
  int64_t output = block(segment, 16384, 4096, 3000);
  kernel(kRelu, 3100, 100, {{segment, A::Write, 16384}});
  int64_t unused = block(segment, 32768, 4096, 4000);
  kernel(kRelu, 4100, 100, {});
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  EXPECT_EQ(item(built, Kind::Block, kept).owner, Owner::CublasWorkspace);
  EXPECT_EQ(item(built, Kind::Block, scratch).owner, Owner::CudnnWorkspace);
  EXPECT_EQ(item(built, Kind::Block, output).owner, Owner::FrameworkTensors);
  EXPECT_EQ(item(built, Kind::Block, unused).owner, Owner::FrameworkTensors);
}

// Ops sampled (1 in 16): the op recorded around a block may be an outer one
// whose library call went unrecorded (autograd's evaluate_function around
// aten::mm): a block kept to the end and never used, handed out before a
// cuBLAS kernel, is cuBLAS's. With every op recorded, the same outer op
// alone says the block is the program's.
TEST_F(MemoryTest, InASampledTraceAnOuterOpLeavesItToTheNextKernel) {
  trace.add_framework_range(FrameworkRangeKind::Op, "autograd::engine::evaluate_function: AddmmBackward0", 900,
                            2000);
  int64_t segment = allocation(AllocKind::Device, 1 << 20, 0);
  int64_t workspace = block(segment, 0, 4096, 1000);
  kernel(kGemm, 1100, 100, {});
  {
    trace::Trace opened(trace.db());
    EXPECT_EQ(item(model(opened), Kind::Block, workspace).owner, Owner::FrameworkTensors);
  }
  trace.set_meta(kMetaOpSampleEvery, "16");
  trace::Trace opened(trace.db());
  EXPECT_EQ(item(model(opened), Kind::Block, workspace).owner, Owner::CublasWorkspace);
}

// A framework's tear-down after its loop may free cuBLAS's workspaces
// (Lightning clears them as it ends): the workspace was still held through
// every step, and the loop's last step ends before the tear-down.
TEST_F(MemoryTest, AWorkspaceFreedInTheTearDownWasHeldThroughTheSteps) {
  int64_t segment = allocation(AllocKind::Device, 64 << 20, 0);
  int64_t workspace = block(segment, 0, 32 << 20, 1000);
  int64_t ns = 1100;
  for (int step = 0; step < 20; ++step) {
    for (const char* name : {kGemm, kRelu, "loss", "loss_backward", kGemm, "relu_backward", "adamw"}) {
      kernel(name, ns, 100, {});
      ns += 1000;
    }
  }
  for (int i = 0; i < 12; ++i) {
    kernel("to_cpu", ns, 100, {});
    ns += 1000;
    if (i == 6) {
      Statement freed = trace.db().prepare("UPDATE sub_allocations SET free_requested_ns = ?, free_ns = ? WHERE id = ?");
      freed.bind(1, ns).bind(2, ns).bind(3, workspace).run();
    }
  }
  trace::Trace opened(trace.db());
  EXPECT_EQ(item(model(opened), Kind::Block, workspace).owner, Owner::CublasWorkspace);
}

// Device memory outside a framework's blocks only cuDNN's kernels used is
// cuDNN's; such memory made after the last kernel stays a library's. At
// the peak, cuDNN's own allocation and the workspace block PyTorch's
// allocator made for it are one owner.
TEST_F(MemoryTest, ALibrarysOwnAllocationIsNamedByTheKernelsThatUseIt) {
  int64_t segment = allocation(AllocKind::Device, 4096, 0);
  int64_t scratch = block(segment, 0, 4096, 0);
  int64_t cudnn = allocation(AllocKind::Device, 2048, 1000);
  kernel(kConv, 1100, 100, {{cudnn, A::ReadWrite}, {segment, A::ReadWrite}});
  int64_t other = allocation(AllocKind::Device, 1024, 1500);
  trace::Trace opened(trace.db());
  MemoryModel built = model(opened);
  EXPECT_EQ(item(built, Kind::Allocation, cudnn).owner, Owner::CudnnWorkspace);
  EXPECT_EQ(item(built, Kind::Block, scratch).owner, Owner::CudnnWorkspace);
  EXPECT_EQ(item(built, Kind::Allocation, other).owner, Owner::Library);
  const DeviceMemory& gpu = device(built, 0);
  ASSERT_FALSE(gpu.at_peak.empty());
  EXPECT_EQ(gpu.at_peak[0].owner, Owner::CudnnWorkspace);
  EXPECT_EQ(gpu.at_peak[0].bytes, 4096 + 2048);
  EXPECT_EQ(gpu.at_peak[0].items, 2);
  EXPECT_EQ(owner_bytes(gpu, Owner::Library), 1024);
}

}  // namespace
}  // namespace apptracer::memory
