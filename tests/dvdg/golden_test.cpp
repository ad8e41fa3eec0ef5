// Golden graphs: each trace is small enough to state every expected edge.
#include <gtest/gtest.h>

#include "dvdg_fixture.h"

namespace apptracer::dvdg {
namespace {

using Edges = std::vector<std::string>;

TEST_F(DvdgTest, VectorAddGivesExactlyTheEdgesOfFigure61) {
  add_vector_add(*this);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "a_h:0 -> a_d:1 [HtoD copy]",
                              "b_h:0 -> b_d:1 [HtoD copy]",
                              "a_d:1 -> s_d:1 [vector_add]",
                              "b_d:1 -> s_d:1 [vector_add]",
                              "s_d:1 -> s_h:1 [DtoH copy]",
                          }));
  for (const Value& value : graph.values) EXPECT_FALSE(value.read_uninitialized);
}

// The dvdg command gives the trace's rows back before building: the graph
// must need nothing of them past ordering the operations.
TEST_F(DvdgTest, TheGraphIsTheSameWithTheTracesRowsGivenBackBeforeItsBuild) {
  add_vector_add(*this);
  Graph kept = build();
  trace::Trace trace(trace_->db());
  Graph built = build_graph_from_trace(trace, KernelAccesses::Exact, nullptr,
                                       TraceRowsAfter::Released);
  EXPECT_EQ(edges(built), edges(kept));
  EXPECT_EQ(built.values.size(), kept.values.size());
  EXPECT_EQ(built.ops.size(), kept.ops.size());
  EXPECT_EQ(trace.rows<KernelRow>().size(), 1u) << "read again when asked for";
}

// Traces from before kernel arguments were captured: the kernel has no
// edges, and since it may have written s_d, reading s_d is not reported as
// a read of uninitialized memory.
TEST_F(DvdgTest, KernelWithoutCapturedArgumentsHasNoEdgesAndHidesNoBug) {
  add_vector_add(*this, /*with_kernel_args=*/false);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "a_h:0 -> a_d:1 [HtoD copy]",
                              "b_h:0 -> b_d:1 [HtoD copy]",
                              "s_d:0 -> s_h:1 [DtoH copy]",
                          }));
  size_t opaque = 0;
  for (const Op& op : graph.ops) opaque += op.arguments_unknown;
  EXPECT_EQ(opaque, 1u);
}

// A kernel whose arguments were read but point into no allocation (only
// numbers: its argument set is empty) is no opaque kernel: the device memory
// it could not have reached still holds nothing.
TEST_F(DvdgTest, AKernelWhoseArgumentsPointNowhereIsNotOpaque) {
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 128, /*alloc_ns=*/10);
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, 128, /*alloc_ns=*/20);
  int64_t k = kernel("numbers_only", {}, 50);
  trace_->db().exec("INSERT INTO kernel_arg_sets (words) VALUES (0)");
  trace_->db().exec("UPDATE kernels SET arg_set_id = last_insert_rowid() WHERE id = " +
                    std::to_string(k));
  copy(CopyKind::DtoH, d, h, 128, 100);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{"d:0 -> h:1 [DtoH copy] (uninitialized)"}));
  for (const Op& op : graph.ops) EXPECT_FALSE(op.arguments_unknown);
}

TEST_F(DvdgTest, MemoryAllocatedAfterAnUncapturedKernelIsStillUninitialized) {
  kernel("opaque", {}, 50);
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 128, /*alloc_ns=*/60);
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, 128, /*alloc_ns=*/70);
  copy(CopyKind::DtoH, d, h, 128, 100);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{"d:0 -> h:1 [DtoH copy] (uninitialized)"}));
}

// PyTorch's split_with_sizes_copy_out takes its destination tensors as an
// array of pointers (char**): what it writes is in no argument. A tensor
// block handed out before it ran may hold its data; one handed out after
// it still holds nothing.
TEST_F(DvdgTest, AKernelWritingThroughPointerArraysMayHaveWrittenEarlierBlocks) {
  int64_t segment = buffer("seg", AllocKind::Device, 0x7f0000000000, 1024, /*alloc_ns=*/10);
  int64_t pointers = buffer("ptrs", AllocKind::Device, 0x7f0000100000, 64, /*alloc_ns=*/11);
  block("before", segment, 0, 512, /*alloc_ns=*/20);
  kernel("split_copy(char**, char**, long)",
         {{pointers, AccessKind::Read, AccessSource::ConstSignature}}, 50);
  block("after", segment, 512, 512, /*alloc_ns=*/60);
  kernel("use(float const*)", {{segment, AccessKind::Read, AccessSource::ConstSignature}}, 100);
  kernel("use(float const*)", {{segment, AccessKind::Read, AccessSource::ConstSignature, 512}}, 110);
  Graph graph = build();
  std::vector<std::string> uninitialized;
  for (uint32_t value = 0; value < graph.values.size(); ++value) {
    if (graph.values[value].read_uninitialized) uninitialized.push_back(value_name(graph, value));
  }
  EXPECT_EQ(uninitialized, (std::vector<std::string>{"after:0"}));
  size_t unseen = 0;
  for (const Op& op : graph.ops) unseen += op.writes_unseen;
  EXPECT_EQ(unseen, 1u);
}

// cuBLAS scales a split-K GEMM's output by beta = 0 before the GEMM, passing
// it as input and output (scal_kernel(..., float const*, float*, ...)): the
// in-place read need not happen, so memory nothing wrote is no bug there.
TEST_F(DvdgTest, AnInPlaceReadOfMemoryNothingWroteIsPossibleNotCertain) {
  int64_t c = buffer("c", AllocKind::Device, 0x7f0000000000, 256, /*alloc_ns=*/10);
  kernel("scal(float const*, float*)",
         {{c, AccessKind::Read, AccessSource::ConstSignature},
          {c, AccessKind::ReadWrite, AccessSource::Assumed}},
         50);
  Graph graph = build();
  for (const Value& value : graph.values) EXPECT_FALSE(value.read_uninitialized);
}

// A chunked pipeline over one buffer: chunk i copied in at i * 256, then a
// kernel given the buffer at i * 256. The launches step through the buffer,
// so each kernel reads its chunk, not every later chunk (not yet copied in,
// which a pointer reaching the buffer's end took for uninitialized reads).
TEST_F(DvdgTest, LaunchesSteppingThroughABufferReadOneStrideEach) {
  int64_t h = buffer("h", AllocKind::PinnedHost, 0x1000, 1024);
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 1024);
  for (int i = 0; i < 4; ++i) {
    copy(CopyKind::HtoD, h, d, 256, 100 + 100 * i, 7, /*dst_offset=*/256 * i);
    kernel("relax", {{d, AccessKind::Read, AccessSource::ConstSignature, 256 * i}}, 150 + 100 * i);
  }
  Graph graph = build();
  for (const Value& value : graph.values) EXPECT_FALSE(value.read_uninitialized);
  EXPECT_EQ(edges(graph), (Edges{
                              "h:0 -> d[0,256):1 [HtoD copy]",
                              "h:0 -> d[256,512):2 [HtoD copy]",
                              "h:0 -> d[512,768):3 [HtoD copy]",
                              "h:0 -> d[768,1024):4 [HtoD copy]",
                          }));
}

// Tiles of uneven sizes one after another in one buffer (128, 384, 128 and
// 384 bytes), each copied in and turned by a kernel, given both buffers at
// its tile, into the same tile of another: each launch reaches up to where
// the next one starts (the last to the buffers' end), so each kernel reads
// its own tile and no tile not yet copied in, and writes only its own.
TEST_F(DvdgTest, LaunchesSteppingThroughUnevenTilesReadTheirTileEach) {
  int64_t h = buffer("h", AllocKind::PinnedHost, 0x1000, 1024);
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 1024);
  int64_t o = buffer("o", AllocKind::Device, 0x7f0000100000, 1024);
  const int64_t first[] = {0, 128, 512, 640, 1024};
  for (int i = 0; i < 4; ++i) {
    copy(CopyKind::HtoD, h, d, first[i + 1] - first[i], 100 + 100 * i, 7, /*dst_offset=*/first[i],
         /*src_offset=*/first[i]);
    kernel("relax", {{d, AccessKind::Read, AccessSource::ConstSignature, first[i]},
                     {o, AccessKind::Write, AccessSource::ConstSignature, first[i]}},
           150 + 100 * i);
  }
  Graph graph = build();
  for (const Value& value : graph.values) EXPECT_FALSE(value.read_uninitialized);
  EXPECT_EQ(edges(graph), (Edges{
                              "h:0 -> d[0,128):1 [HtoD copy]",
                              "d[0,128):1 -> o[0,128):1 [relax]",
                              "h:0 -> d[128,512):2 [HtoD copy]",
                              "d[128,512):2 -> o[128,512):2 [relax]",
                              "h:0 -> d[512,640):3 [HtoD copy]",
                              "d[512,640):3 -> o[512,640):3 [relax]",
                              "h:0 -> d[640,1024):4 [HtoD copy]",
                              "d[640,1024):4 -> o[640,1024):4 [relax]",
                          }));
}

// Two launches at different places are no stride (it could be chance): each
// pointer still reaches the buffer's end, so what the kernels wrote there is
// what the copy of the last chunk reads (with a stride taken, it would read
// bytes nothing wrote).
TEST_F(DvdgTest, TwoLaunchesAreNoStride) {
  int64_t h = buffer("h", AllocKind::PinnedHost, 0x1000, 1024);
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 1024);
  for (int i = 0; i < 2; ++i) {
    kernel("fill", {{d, AccessKind::Write, AccessSource::ConstSignature, 256 * i}}, 100 + 100 * i);
  }
  copy(CopyKind::DtoH, d, h, 256, 300, 7, /*dst_offset=*/0, /*src_offset=*/768);
  Graph graph = build();
  for (const std::string& edge : edges(graph)) {
    EXPECT_EQ(edge.find("uninitialized"), std::string::npos) << edge;
  }
  EXPECT_FALSE(edges(graph).empty());
}

// A caching allocator handing out one block after another: launches on
// three tensors, each 1 KiB, at 256 bytes from each other over time, look
// like a stride of 256. Each block's end is known, and wins: each kernel
// wrote its whole tensor, and the copy of it reads what the kernel wrote.
TEST_F(DvdgTest, ATensorBlocksEndWinsOverAStride) {
  int64_t segment = buffer("segment", AllocKind::Device, 0x7f0000000000, 4096, /*alloc_ns=*/1);
  int64_t h = buffer("h", AllocKind::PinnedHost, 0x1000, 1024, /*alloc_ns=*/2);
  for (int i = 0; i < 3; ++i) {
    block("t" + std::to_string(i), segment, 256 * i, 1024, 100 * i + 10, 100 * i + 90);
    kernel("fill", {{segment, AccessKind::Write, AccessSource::ConstSignature, 256 * i}}, 100 * i + 20);
    copy(CopyKind::DtoH, segment, h, 1024, 100 * i + 40, 7, /*dst_offset=*/0, /*src_offset=*/256 * i);
  }
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "t0:1 -> h:1 [DtoH copy]",
                              "t1:1 -> h:2 [DtoH copy]",
                              "t2:1 -> h:3 [DtoH copy]",
                          }));
}

// A copy into part of a buffer versions only that part; a read of the whole
// depends on each part's own version, by the bytes it took from it.
TEST_F(DvdgTest, PartialCopiesVersionOnlyTheirBytes) {
  int64_t low = buffer("low_h", AllocKind::PinnedHost, 0x1000, 512);
  int64_t high = buffer("high_h", AllocKind::PinnedHost, 0x2000, 512);
  int64_t out = buffer("out_h", AllocKind::PinnedHost, 0x3000, 1024);
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 1024);
  copy(CopyKind::HtoD, low, d, 512, 100, 7, /*dst_offset=*/0);
  copy(CopyKind::HtoD, high, d, 512, 200, 7, /*dst_offset=*/512);
  copy(CopyKind::DtoH, d, out, 1024, 300);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "low_h:0 -> d[0,512):1 [HtoD copy]",
                              "high_h:0 -> d[512,1024):2 [HtoD copy]",
                              "d[0,512):1 -> out_h:1 [DtoH copy]",
                              "d[512,1024):2 -> out_h:1 [DtoH copy]",
                          }));
  EXPECT_EQ(edges_of(graph)[2].bytes, 512);
  EXPECT_EQ(edges_of(graph)[3].bytes, 512);
}

// A kernel may write less than it could reach: what was there is carried.
TEST_F(DvdgTest, KernelWriteCarriesWhatItMayHaveLeft) {
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, 256);
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 256);
  copy(CopyKind::HtoD, h, d, 256, 100);
  kernel("scatter", {{d, AccessKind::Write, AccessSource::Sanitizer}}, 200);
  copy(CopyKind::DtoH, d, h, 256, 300);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "h:0 -> d:1 [HtoD copy]",
                              "d:1 -> d:2 [scatter] (carry)",
                              "d:2 -> h:1 [DtoH copy]",
                          }));
}

// An optimizer's multi-tensor kernel reads and writes hundreds of tensors:
// a dependence from each value it read to each it wrote, which the graph
// holds as its reads and its writes, not one by one, and gives in the order
// of its writes, each with its carries. Its edges go through its access set
// (access_set_test.cpp).
TEST_F(DvdgTest, AKernelsDataEdgesAreEachValueItReadToEachItWrote) {
  constexpr int kTensors = 200;
  std::vector<Arg> args;
  for (int i = 0; i < kTensors; ++i) {
    int64_t tensor = buffer("t" + std::to_string(i), AllocKind::Device,
                            0x7f0000000000 + i * 0x1000, 256);
    copy(CopyKind::HtoD, buffer("h" + std::to_string(i), AllocKind::PageableHost,
                                0x100000 + i * 0x1000, 256),
         tensor, 256, 100 + i);
    args.push_back({tensor, AccessKind::ReadWrite, AccessSource::Assumed});
  }
  int64_t out = buffer("out", AllocKind::Device, 0x7f1000000000, 256);
  copy(CopyKind::HtoD, buffer("h_out", AllocKind::PageableHost, 0x900000, 256), out, 256, 400);
  args.push_back({out, AccessKind::Write, AccessSource::Sanitizer});
  kernel("multi_tensor_apply", args, 1000);
  Graph graph = build();
  uint32_t op = static_cast<uint32_t>(graph.ops.size() - 1);
  ASSERT_EQ(graph.ops[op].kind, OpKind::Kernel);
  EXPECT_EQ(graph.dependence_count(), size_t{kTensors + 1} + kTensors * (kTensors + 1) + 1);
  ASSERT_TRUE(graph.ops[op].access_set);
  EXPECT_EQ(graph.edge_count(), size_t{kTensors + 1} + kTensors + (kTensors + 1) + 1);
  EXPECT_EQ(graph.listed_edges.size(), size_t{kTensors + 1} + 1) << "the copies' and one carry";
  std::vector<Edge> edges = edges_of(graph, op);
  ASSERT_EQ(edges.size(), size_t{kTensors * (kTensors + 1) + 1});
  EXPECT_EQ(edge_text(graph, edges[0]), "t0:1 -> t0:2 [multi_tensor_apply]");
  EXPECT_EQ(edge_text(graph, edges[kTensors - 1]), "t199:1 -> t0:2 [multi_tensor_apply]");
  EXPECT_EQ(edge_text(graph, edges[kTensors]), "t0:1 -> t1:2 [multi_tensor_apply]");
  // Written last, it does not read what it overwrites: what it may have left is carried.
  EXPECT_EQ(edge_text(graph, edges[edges.size() - 2]), "t199:1 -> out:2 [multi_tensor_apply]");
  EXPECT_EQ(edge_text(graph, edges.back()), "out:1 -> out:2 [multi_tensor_apply] (carry)");
}

// A graph launch's work is all issued by one call: on its stream it runs in
// the order the GPU ran it, not in the order the rows were stored.
TEST_F(DvdgTest, WorkOfOneGraphLaunchIsOrderedAsTheGpuRanIt) {
  int64_t h = buffer("h", AllocKind::PinnedHost, 0x1000, 256);
  int64_t r = buffer("r", AllocKind::PinnedHost, 0x2000, 256);
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 256);
  int64_t o = buffer("o", AllocKind::Device, 0x7f0000001000, 256);
  auto graph_copy = [&](CopyKind kind, int64_t src, int64_t dst, int64_t gpu_start) {
    testing::MemcpyRow row;
    row.kind = kind;
    row.bytes = 256;
    row.src_alloc_id = src;
    row.dst_alloc_id = dst;
    row.src_offset = row.dst_offset = 0;
    row.src_memory = kind == CopyKind::HtoD ? MemoryKind::Pinned : MemoryKind::Device;
    row.dst_memory = kind == CopyKind::DtoH ? MemoryKind::Pinned : MemoryKind::Device;
    row.stream = 7;
    row.api_start_ns = 100;  // the graph launch
    row.gpu_start_ns = gpu_start;
    row.gpu_end_ns = gpu_start + 5;
    trace_->add(row);
  };
  graph_copy(CopyKind::HtoD, h, d, 110);
  graph_copy(CopyKind::DtoH, o, r, 130);
  kernel("scale",
         {{d, AccessKind::Read, AccessSource::ConstSignature},
          {o, AccessKind::Write, AccessSource::Assumed}},
         100, 7, /*gpu_start=*/120);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "h:0 -> d:1 [HtoD copy]",
                              "d:1 -> o:1 [scale]",
                              "o:1 -> r:1 [DtoH copy]",
                          }));
}

TEST_F(DvdgTest, BufferReusedAcrossIterationsGetsOneVersionPerWrite) {
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, 256);
  int64_t r = buffer("r", AllocKind::PageableHost, 0x2000, 256);
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 256);
  int64_t o = buffer("o", AllocKind::Device, 0x7f0000001000, 256);
  testing::MemsetRow zero;
  zero.alloc_id = o;
  zero.alloc_offset = 0;
  zero.address = 0x7f0000001000;
  zero.bytes = 256;
  zero.stream = 7;
  zero.api_start_ns = 50;
  trace_->add(zero);
  for (int64_t i = 0; i < 3; ++i) {
    int64_t t = 100 + 100 * i;
    copy(CopyKind::HtoD, h, d, 256, t);
    kernel("accumulate",
           {{d, AccessKind::Read, AccessSource::ConstSignature},
            {o, AccessKind::ReadWrite, AccessSource::Assumed}},
           t + 20);
    copy(CopyKind::DtoH, o, r, 256, t + 40);
  }
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "h:0 -> d:1 [HtoD copy]",
                              "d:1 -> o:2 [accumulate]",
                              "o:1 -> o:2 [accumulate]",
                              "o:2 -> r:1 [DtoH copy]",
                              "h:0 -> d:2 [HtoD copy]",
                              "d:2 -> o:3 [accumulate]",
                              "o:2 -> o:3 [accumulate]",
                              "o:3 -> r:2 [DtoH copy]",
                              "h:0 -> d:3 [HtoD copy]",
                              "d:3 -> o:4 [accumulate]",
                              "o:3 -> o:4 [accumulate]",
                              "o:4 -> r:3 [DtoH copy]",
                          }));
}

// Stream 1 copies into x, but its GPU work starts late; stream 2's kernel
// has no GPU timestamps, so by time alone it would run first and read x
// before it was written. The event orders it after the copy.
class TwoStreams : public DvdgTest {
 public:
  void add_trace(bool with_event) {
    int64_t h = buffer("h", AllocKind::PinnedHost, 0x1000, 64);
    int64_t x = buffer("x", AllocKind::Device, 0x7f0000000000, 64);
    int64_t y = buffer("y", AllocKind::Device, 0x7f0000001000, 64);
    testing::MemcpyRow produce;
    produce.kind = CopyKind::HtoD;
    produce.bytes = 64;
    produce.src_alloc_id = h;
    produce.dst_alloc_id = x;
    produce.src_memory = MemoryKind::Pinned;
    produce.stream = 1;
    produce.is_async = true;
    produce.api_start_ns = 100;
    produce.gpu_start_ns = 1000;
    produce.gpu_end_ns = 2000;
    trace_->add(produce);
    if (with_event) {
      testing::StreamEventRow record;
      record.kind = StreamEventKind::Record;
      record.event_handle = 0xe1;
      record.stream = 1;
      record.ns = 110;
      trace_->add(record);
      testing::StreamEventRow wait = record;
      wait.kind = StreamEventKind::Wait;
      wait.stream = 2;
      wait.ns = 120;
      trace_->add(wait);
    }
    testing::KernelRow consume;
    consume.demangled_name = "consume";
    consume.stream = 2;
    consume.api_start_ns = 130;
    int64_t k = trace_->add(consume);
    testing::KernelArgRow in;
    in.kernel_id = k;
    in.alloc_id = x;
    in.access = AccessKind::Read;
    in.access_source = AccessSource::ConstSignature;
    trace_->add(in);
    testing::KernelArgRow out = in;
    out.param_index = 1;
    out.alloc_id = y;
    out.access = AccessKind::ReadWrite;
    out.access_source = AccessSource::Assumed;
    trace_->add(out);
  }
};

TEST_F(TwoStreams, EventOrdersTheConsumerAfterTheProducer) {
  add_trace(/*with_event=*/true);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "h:0 -> x:1 [HtoD copy]",
                              "x:1 -> y:1 [consume]",
                          }));
}

TEST_F(TwoStreams, WithoutTheEventTimestampsAloneWouldReadUninitializedMemory) {
  add_trace(/*with_event=*/false);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "x:0 -> y:1 [consume] (uninitialized)",
                              "h:0 -> x:1 [HtoD copy]",
                          }));
}

TEST_F(TwoStreams, StreamSynchronizationAlsoOrdersThem) {
  int64_t h = buffer("h", AllocKind::PinnedHost, 0x1000, 64);
  int64_t x = buffer("x", AllocKind::Device, 0x7f0000000000, 64);
  int64_t y = buffer("y", AllocKind::Device, 0x7f0000001000, 64);
  testing::MemcpyRow produce;
  produce.bytes = 64;
  produce.src_alloc_id = h;
  produce.dst_alloc_id = x;
  produce.stream = 1;
  produce.api_start_ns = 100;
  produce.gpu_start_ns = 1000;
  produce.gpu_end_ns = 2000;
  trace_->add(produce);
  testing::SyncRow sync;
  sync.kind = SyncKind::Stream;
  sync.stream = 1;
  sync.start_ns = 110;
  sync.end_ns = 120;
  trace_->add(sync);
  kernel("consume",
         {{x, AccessKind::Read, AccessSource::ConstSignature},
          {y, AccessKind::Write, AccessSource::Sanitizer}},
         130, /*stream=*/2, /*gpu_start=*/140);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "h:0 -> x:1 [HtoD copy]",
                              "x:1 -> y:1 [consume]",
                          }));
}

TEST_F(DvdgTest, ReadOfUninitializedDeviceMemoryIsFlagged) {
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 128);
  int64_t o = buffer("o", AllocKind::Device, 0x7f0000001000, 128);
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, 128);
  kernel("use_garbage",
         {{d, AccessKind::Read, AccessSource::ConstSignature},
          {o, AccessKind::ReadWrite, AccessSource::Assumed}},
         100);
  copy(CopyKind::DtoH, o, h, 128, 200);
  Graph graph = build();
  // The assumed read of o's version 0 adds nothing; the const read of d is a bug.
  EXPECT_EQ(edges(graph), (Edges{
                              "d:0 -> o:1 [use_garbage] (uninitialized)",
                              "o:1 -> h:1 [DtoH copy]",
                          }));
  size_t flagged_values = 0;
  for (const Value& value : graph.values) flagged_values += value.read_uninitialized;
  EXPECT_EQ(flagged_values, 1u);
  size_t flagged_ops = 0;
  for (const Op& op : graph.ops) flagged_ops += op.reads_uninitialized;
  EXPECT_EQ(flagged_ops, 1u);
}

TEST_F(DvdgTest, FreedValuesAreMarkedAndUnknownHostRegionsAreValues) {
  testing::AllocationRow row;
  row.address = 0x7f0000000000;
  row.bytes = 64;
  row.alloc_ns = 10;
  row.free_ns = 500;
  int64_t d = trace_->add(row);
  names_[d] = "d";
  testing::MemcpyRow in;
  in.bytes = 64;
  in.src_address = 0x9000;  // host memory the tracer did not see allocated
  in.dst_alloc_id = d;
  in.dst_address = 0x7f0000000000;
  in.stream = 7;
  in.api_start_ns = 100;
  trace_->add(in);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{"region@0x9000:0 -> d:1 [HtoD copy]"}));
  const Value& written = graph.values[edges_of(graph)[0].dst_value];
  ASSERT_NE(written.freed_by_op, Value::kNoOp);
  EXPECT_EQ(graph.ops[written.freed_by_op].kind, OpKind::Free);
  EXPECT_FALSE(graph.locations[graph.values[edges_of(graph)[0].src_value].location].alloc_id);
}

TEST_F(DvdgTest, PartialMemsetVersionsItsBytesAndFullMemsetReplacesEverything) {
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, 256);
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 256);
  copy(CopyKind::HtoD, h, d, 256, 100);
  testing::MemsetRow half;
  half.alloc_id = d;
  half.alloc_offset = 128;
  half.bytes = 128;
  half.stream = 7;
  half.api_start_ns = 200;
  trace_->add(half);
  copy(CopyKind::DtoH, d, h, 256, 300);
  testing::MemsetRow whole = half;
  whole.alloc_offset = 0;
  whole.bytes = 256;
  whole.api_start_ns = 400;
  trace_->add(whole);
  copy(CopyKind::DtoH, d, h, 256, 500);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "h:0 -> d:1 [HtoD copy]",
                              "d:1 -> h:1 [DtoH copy]",
                              "d[128,256):2 -> h:1 [DtoH copy]",
                              "d:3 -> h:2 [DtoH copy]",
                          }));
  EXPECT_EQ(edges_of(graph)[1].bytes, 128) << "the first half still holds the copy's data";
}

TEST_F(DvdgTest, ArgumentsIntoTheSameAllocationAreOneAccess) {
  int64_t h = buffer("h", AllocKind::PageableHost, 0x1000, 256);
  int64_t d = buffer("d", AllocKind::Device, 0x7f0000000000, 256);
  copy(CopyKind::HtoD, h, d, 256, 100);
  // in_place(const float* in, float* out) called with in == out + 16.
  kernel("in_place",
         {{d, AccessKind::Read, AccessSource::ConstSignature},
          {d, AccessKind::Write, AccessSource::Sanitizer}},
         200);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "h:0 -> d:1 [HtoD copy]",
                              "d:1 -> d:2 [in_place]",
                          }));
}

TEST_F(TwoStreams, AReusedEventOrdersAfterItsLatestRecord) {
  int64_t h = buffer("h", AllocKind::PinnedHost, 0x1000, 64);
  int64_t x = buffer("x", AllocKind::Device, 0x7f0000000000, 64);
  int64_t y = buffer("y", AllocKind::Device, 0x7f0000001000, 64);
  testing::StreamEventRow record;
  record.event_handle = 0xe1;
  record.stream = 1;
  record.ns = 50;  // an earlier use of the same event, before x was written
  trace_->add(record);
  testing::MemcpyRow produce;
  produce.bytes = 64;
  produce.src_alloc_id = h;
  produce.dst_alloc_id = x;
  produce.stream = 1;
  produce.api_start_ns = 100;
  produce.gpu_start_ns = 1000;
  produce.gpu_end_ns = 2000;
  trace_->add(produce);
  record.ns = 110;
  trace_->add(record);
  testing::StreamEventRow wait = record;
  wait.kind = StreamEventKind::Wait;
  wait.stream = 2;
  wait.ns = 120;
  trace_->add(wait);
  kernel("consume",
         {{x, AccessKind::Read, AccessSource::ConstSignature},
          {y, AccessKind::Write, AccessSource::Sanitizer}},
         130, /*stream=*/2, /*gpu_start=*/140);
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "h:0 -> x:1 [HtoD copy]",
                              "x:1 -> y:1 [consume]",
                          }));
}

TEST_F(TwoStreams, DeviceSynchronizationOrdersEveryStream) {
  int64_t h = buffer("h", AllocKind::PinnedHost, 0x1000, 64);
  int64_t x = buffer("x", AllocKind::Device, 0x7f0000000000, 64);
  int64_t y = buffer("y", AllocKind::Device, 0x7f0000001000, 64);
  testing::MemcpyRow produce;
  produce.bytes = 64;
  produce.src_alloc_id = h;
  produce.dst_alloc_id = x;
  produce.stream = 1;
  produce.api_start_ns = 100;
  produce.gpu_start_ns = 1000;
  produce.gpu_end_ns = 2000;
  trace_->add(produce);
  testing::SyncRow sync;
  sync.kind = SyncKind::Device;
  sync.device = 0;
  sync.start_ns = 110;
  sync.end_ns = 2010;
  trace_->add(sync);
  kernel("consume",
         {{x, AccessKind::Read, AccessSource::ConstSignature},
          {y, AccessKind::Write, AccessSource::Sanitizer}},
         2100, /*stream=*/2, /*gpu_start=*/150);  // a GPU clock that disagrees
  Graph graph = build();
  EXPECT_EQ(edges(graph), (Edges{
                              "h:0 -> x:1 [HtoD copy]",
                              "x:1 -> y:1 [consume]",
                          }));
}

TEST_F(DvdgTest, OperationsAreInProgramOrder) {
  add_vector_add(*this);
  Graph graph = build();
  std::vector<std::string> kinds;
  for (uint32_t op = 0; op < graph.ops.size(); ++op) {
    if (graph.ops[op].kind == OpKind::Copy || graph.ops[op].kind == OpKind::Kernel) {
      kinds.push_back(op_name(graph, op));
    }
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"HtoD copy", "HtoD copy", "vector_add", "DtoH copy"}));
}

}  // namespace
}  // namespace apptracer::dvdg
