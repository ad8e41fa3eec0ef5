// CUDA graph nodes from fabricated CUPTI resource callbacks: what a node the
// program makes records, that a call captured into a graph records a node and
// no work, and that an instantiation's copies name their originals.
#include <cuda.h>
#include <cupti.h>
#include <gtest/gtest.h>

#include "translation_fixture.h"

namespace apptracer::testing {
namespace {

class GraphTranslationTest : public TranslationTest {
 protected:
  void SetUp() override {
    // kernel(float* out, const float* in, int n)
    LaunchedFunction& f = cuda_.functions[function_];
    f.name_id = strings_.intern("_Z6kernelPfPKfi");
    f.param_offsets = {0, 8, 16};
    f.param_sizes = {8, 8, 4};
    allocations_.add(0x7f0000100000, 1 << 20, AllocKind::Device, 0, 1);
  }

  // A kernel node as the driver holds it (it owns copies of the argument values).
  CUgraphNode kernel_node(uintptr_t id) {
    auto node = reinterpret_cast<CUgraphNode>(id);
    FakeCudaQueries::FakeNode& fake = cuda_.nodes[node];
    fake.type = GraphNodeType::Kernel;
    fake.kernel.kern = reinterpret_cast<CUkernel>(const_cast<void*>(function_));
    fake.kernel.gridDimX = 3;
    fake.kernel.gridDimY = fake.kernel.gridDimZ = 1;
    fake.kernel.blockDimX = 64;
    fake.kernel.blockDimY = fake.kernel.blockDimZ = 1;
    fake.kernel.sharedMemBytes = 16;
    fake.kernel.kernelParams = params_;
    return node;
  }

  const void* function_ = reinterpret_cast<const void*>(0xf00);
  CUgraph graph_ = reinterpret_cast<CUgraph>(7);
  uint64_t out_ = 0x7f0000100000, in_ = 0x7f0000100040;
  int n_ = 5;
  void* params_[3] = {&out_, &in_, &n_};
};

TEST_F(GraphTranslationTest, AKernelNodeRecordsItsParametersAndPointerWords) {
  graph_callback(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, graph_, kernel_node(0x100));
  std::vector<Record> records = drained();
  ASSERT_EQ(records.size(), 2u);
  ASSERT_EQ(records[0].type, RecordType::GraphNode);
  const GraphNodeRecord& n = records[0].graph_node;
  EXPECT_EQ(n.event, GraphNodeEvent::Created);
  EXPECT_EQ(n.node_id, 0x100u);
  EXPECT_EQ(n.graph_id, 7u);
  EXPECT_EQ(n.type, GraphNodeType::Kernel);
  EXPECT_FALSE(n.captured) << "made by the graph API, not inside a launch";
  EXPECT_EQ(records[0].correlation_id, 0u) << "no traced call in progress";
  ASSERT_TRUE(n.has_params);
  EXPECT_EQ(n.params.kernel.name_id, strings_.intern("_Z6kernelPfPKfi"));
  EXPECT_EQ(n.params.kernel.function_handle, 0xf00u) << "the CUkernel, as func is NULL";
  EXPECT_EQ(n.params.kernel.grid[0], 3u);
  EXPECT_EQ(n.params.kernel.block[0], 64u);
  EXPECT_EQ(n.params.kernel.dynamic_shared_bytes, 16u);
  EXPECT_TRUE(n.params.kernel.args_captured);
  ASSERT_EQ(records[1].type, RecordType::KernelArgs);
  const KernelArgsRecord& args = records[1].kernel_args;
  EXPECT_TRUE(args.last);
  ASSERT_EQ(args.count, 2) << "the int is no pointer";
  EXPECT_EQ(args.words[0].value, out_);
  EXPECT_EQ(args.words[1].value, in_);
  EXPECT_EQ(args.words[1].param_index, 1);
}

TEST_F(GraphTranslationTest, ALaunchOnACapturingStreamBecomesANodeAndRecordsNoKernel) {
  CUgraphNode node = kernel_node(0x200);
  cuLaunchKernel_params p{(CUfunction)function_, 3, 1, 1, 64, 1, 1, 16,
                          reinterpret_cast<CUstream>(0x9), params_, nullptr};
  auto captured = call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                       "cuLaunchKernel", p, 0, nullptr, [&] {
                         graph_callback(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, graph_, node);
                       });
  EXPECT_TRUE(of_type(captured, RecordType::Kernel).empty()) << "it ran nothing now";
  std::vector<Record> nodes = of_type(captured, RecordType::GraphNode);
  ASSERT_EQ(nodes.size(), 1u);
  std::vector<Record> calls = of_type(captured, RecordType::ApiCall);
  ASSERT_EQ(calls.size(), 1u) << "the call itself is still recorded";
  EXPECT_TRUE(nodes[0].graph_node.captured);
  EXPECT_EQ(nodes[0].correlation_id, calls[0].own_correlation_id);
  EXPECT_EQ(of_type(captured, RecordType::KernelArgs).size(), 1u) << "the node's words";

  auto eager = call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                    "cuLaunchKernel", p);
  EXPECT_EQ(of_type(eager, RecordType::Kernel).size(), 1u) << "the next launch runs again";
}

TEST_F(GraphTranslationTest, ACopyCapturedIntoAGraphRecordsTheNodeAndNoCopy) {
  auto node = reinterpret_cast<CUgraphNode>(0x300);
  FakeCudaQueries::FakeNode& fake = cuda_.nodes[node];
  fake.type = GraphNodeType::Memcpy;
  fake.copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  fake.copy.srcHost = reinterpret_cast<void*>(0x5000);
  fake.copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  fake.copy.dstDevice = 0x7f0000100000;
  fake.copy.dstXInBytes = 64;
  fake.copy.WidthInBytes = 256;
  fake.copy.Height = fake.copy.Depth = 1;
  cuMemcpyHtoDAsync_v2_params p{0x7f0000100040, reinterpret_cast<void*>(0x5000), 256,
                                reinterpret_cast<CUstream>(0x9)};
  auto records = call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
                      "cuMemcpyHtoDAsync_v2", p, 0, nullptr, [&] {
                        graph_callback(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, graph_, node);
                      });
  EXPECT_TRUE(of_type(records, RecordType::Memcpy).empty());
  std::vector<Record> nodes = of_type(records, RecordType::GraphNode);
  ASSERT_EQ(nodes.size(), 1u);
  const GraphNodeRecord& n = nodes[0].graph_node;
  EXPECT_TRUE(n.captured);
  ASSERT_TRUE(n.has_params);
  EXPECT_EQ(n.params.copy.src, 0x5000u);
  EXPECT_EQ(n.params.copy.dst, 0x7f0000100040u) << "the destination's first byte";
  EXPECT_EQ(n.params.copy.bytes, 256u);
  EXPECT_EQ(n.params.copy.kind, CopyKind::HtoD);
}

TEST_F(GraphTranslationTest, AMemsetNodeRecordsItsTargetAndSize) {
  auto node = reinterpret_cast<CUgraphNode>(0x400);
  FakeCudaQueries::FakeNode& fake = cuda_.nodes[node];
  fake.type = GraphNodeType::Memset;
  fake.memset.dst = 0x7f0000100080;
  fake.memset.elementSize = 4;
  fake.memset.width = 32;
  fake.memset.height = 2;
  fake.memset.value = 9;
  graph_callback(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, graph_, node);
  std::vector<Record> records = drained();
  ASSERT_EQ(records.size(), 1u);
  const MemsetNodeParams& m = records[0].graph_node.params.memset;
  EXPECT_EQ(m.address, 0x7f0000100080u);
  EXPECT_EQ(m.bytes, 32u * 4 * 2);
  EXPECT_EQ(m.element_size, 4);
  EXPECT_EQ(m.value, 9u);
}

TEST_F(GraphTranslationTest, AnInstantiatedCopyOfANodeNamesItsOriginal) {
  CUgraphNode original = kernel_node(0x100);
  CUgraphNode copy = kernel_node(0x500);
  graph_callback(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, reinterpret_cast<CUgraph>(9), copy,
                 original);
  std::vector<Record> records = drained();
  ASSERT_EQ(records.size(), 1u) << "a copy's parameters are its original's: no words sent";
  const GraphNodeRecord& n = records[0].graph_node;
  EXPECT_EQ(n.event, GraphNodeEvent::Cloned);
  EXPECT_EQ(n.node_id, 0x500u);
  EXPECT_EQ(n.template_node_id, 0x100u);
  EXPECT_EQ(n.graph_id, 9u) << "a copy's graph is its exec";
  EXPECT_EQ(n.type, GraphNodeType::Kernel);
}

TEST_F(GraphTranslationTest, NewParametersOnAnExecsNodeAreRecordedWithTheirWords) {
  CUgraphNode copy = kernel_node(0x500);
  uint64_t other = 0x7f0000100800;
  params_[0] = &other;  // the driver now holds the new argument values
  graph_callback(CUPTI_CBID_RESOURCE_GRAPH_NODE_SET_PARAMS, nullptr, copy,
                 reinterpret_cast<CUgraphNode>(0x100));
  std::vector<Record> records = drained();
  ASSERT_EQ(records.size(), 2u);
  const GraphNodeRecord& n = records[0].graph_node;
  EXPECT_EQ(n.event, GraphNodeEvent::ParamsSet);
  EXPECT_EQ(n.node_id, 0x500u) << "the exec's node, whose launches take them";
  EXPECT_FALSE(n.captured);
  EXPECT_TRUE(n.has_params);
  ASSERT_EQ(records[1].type, RecordType::KernelArgs);
  EXPECT_EQ(records[1].kernel_args.words[0].value, other);
}

}  // namespace
}  // namespace apptracer::testing
