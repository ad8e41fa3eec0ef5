// Rules read off the DVDG: redundant copies, data copied back unchanged,
// copies independent of the kernels they are serialized with, reads of
// memory nothing wrote, writes nothing reads, allocations never used.
#include "diagnose_fixture.h"

namespace apptracer::diagnose {
namespace {

using A = AccessKind;

class FlowRules : public DiagnoseTest {};

TEST_F(FlowRules, CopyingTheSameDataTwiceIsRedundant) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t device = buffer(AllocKind::Device, 1000);
  pinned_copy(host, device, 1000, 10'000);
  kernel("use", 20'000, 5'000, {{device, A::Read}});
  int64_t again = pinned_copy(host, device, 1000, 30'000);
  auto found = findings("redundant_copy");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "memcpys"), std::vector<int64_t>{again});
  EXPECT_EQ(found[0].cost_ns, pinned_ns(1000));
  EXPECT_EQ(found[0].saving_ns, pinned_ns(1000));
  EXPECT_NE(found[0].what.find("already holds"), std::string::npos);
  EXPECT_NE(found[0].what.find("unless CPU code rewrote"), std::string::npos) << found[0].what;
}

// The second upload is a synchronous cudaMemcpy: its call holds the host
// 0.6 us beyond the DMA, and dropping the copy saves the call.
TEST_F(FlowRules, DroppingASynchronousCopySavesItsCall) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t device = buffer(AllocKind::Device, 1000);
  pinned_copy(host, device, 1000, 10'000);
  kernel("use", 20'000, 5'000, {{device, A::Read}});
  copy(CopyKind::HtoD, host, device, 1000, 30'000, pinned_ns(1000), MemoryKind::Pinned, false);
  auto found = findings("redundant_copy");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, pinned_ns(1000) + 600);
  EXPECT_EQ(found[0].saving_ns, pinned_ns(1000) + 600);
}

TEST_F(FlowRules, CopyingAfterTheDestinationChangedIsNotRedundant) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t device = buffer(AllocKind::Device, 1000);
  pinned_copy(host, device, 1000, 10'000);
  kernel("update", 20'000, 5'000, {{device, A::ReadWrite}});
  pinned_copy(host, device, 1000, 30'000);
  EXPECT_TRUE(findings("redundant_copy").empty());
}

TEST_F(FlowRules, DataCopiedBackUnchanged) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t device = buffer(AllocKind::Device, 1000);
  kernel("make", 10'000, 5'000, {{device, A::Write}});
  copy(CopyKind::DtoH, device, host, 1000, 20'000, 3'000);
  int64_t back = copy(CopyKind::HtoD, host, device, 1000, 30'000, 3'000);
  kernel("use", 40'000, 5'000, {{device, A::Read}});
  auto found = findings("redundant_copy");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "memcpys"), std::vector<int64_t>{back});
  EXPECT_NE(found[0].what.find("back to"), std::string::npos) << found[0].what;
  EXPECT_EQ(found[0].saving_ns, 3'000);
}

TEST_F(FlowRules, CopyingBackAfterTheDeviceChangedIsNeeded) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t device = buffer(AllocKind::Device, 1000);
  kernel("make", 10'000, 5'000, {{device, A::Write}});
  copy(CopyKind::DtoH, device, host, 1000, 20'000, 3'000);
  kernel("scratch", 25'000, 1'000, {{device, A::Write}});
  copy(CopyKind::HtoD, host, device, 1000, 30'000, 3'000);
  kernel("use", 40'000, 5'000, {{device, A::Read}});
  EXPECT_TRUE(findings("redundant_copy").empty());
}

// stream 7: compute(a -> b) for 100 us, then a copy into c (nothing of the
// kernel's) for 102 us, then consume(c).
TEST_F(FlowRules, CopySerializedWithAnIndependentKernel) {
  int64_t a = buffer(AllocKind::Device, 1'000'000);
  int64_t b = buffer(AllocKind::Device, 1'000'000);
  int64_t c = buffer(AllocKind::Device, 1'000'000);
  int64_t host = buffer(AllocKind::PinnedHost, 1'000'000);
  int64_t input = pinned_copy(host, a, 1'000'000, 10'000);
  int64_t compute = kernel("compute", 200'000, 100'000, {{a, A::Read}, {b, A::Write}});
  int64_t next = pinned_copy(host, c, 1'000'000, 300'000);
  kernel("consume", 500'000, 100'000, {{c, A::Read}, {b, A::ReadWrite}});
  auto found = findings("no_copy_compute_overlap");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "memcpys"), std::vector<int64_t>{next});
  EXPECT_EQ(rows_of(found[0], "kernels"), std::vector<int64_t>{compute});
  EXPECT_EQ(found[0].cost_ns, pinned_ns(1'000'000));
  EXPECT_EQ(found[0].saving_ns, 100'000);
  (void)input;  // the first copy feeds `compute`: no overlap possible
}

TEST_F(FlowRules, CopyOnItsOwnStreamOverlapsAlready) {
  int64_t a = buffer(AllocKind::Device, 1'000'000);
  int64_t b = buffer(AllocKind::Device, 1'000'000);
  int64_t c = buffer(AllocKind::Device, 1'000'000);
  int64_t host = buffer(AllocKind::PinnedHost, 1'000'000);
  pinned_copy(host, a, 1'000'000, 10'000);
  kernel("compute", 200'000, 100'000, {{a, A::Read}, {b, A::Write}});
  pinned_copy(host, c, 1'000'000, 200'000, /*stream=*/8);
  kernel("consume", 400'000, 100'000, {{c, A::Read}, {b, A::ReadWrite}});
  EXPECT_TRUE(findings("no_copy_compute_overlap").empty());
}

TEST_F(FlowRules, ReadOfMemoryNothingWrote) {
  int64_t input = buffer(AllocKind::Device, 4096);
  int64_t output = buffer(AllocKind::Device, 4096);
  int64_t k = kernel("reader", 10'000, 1'000, {{input, A::Read}, {output, A::Write}});
  auto found = findings("uninitialized_read");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "kernels"), std::vector<int64_t>{k});
  EXPECT_EQ(found[0].cost_ns, 0);
  EXPECT_NE(found[0].what.find("alloc #" + std::to_string(input)), std::string::npos);
}

// An MPI all-reduce of a device buffer nothing wrote: the finding's row is
// the collective's, in the collectives table.
TEST_F(FlowRules, AReadByACollectiveIsACollectivesRow) {
  int64_t send = buffer(AllocKind::Device, 4096);
  int64_t recv = buffer(AllocKind::Device, 4096);
  apptracer::CommunicatorRow comm;
  comm.library = CommLibrary::Mpi;
  comm.comm_id = 0x5eed;
  comm.rank = 0;
  comm.nranks = 1;
  apptracer::CollectiveRow row;
  row.communicator_id = trace.add(comm);
  row.kind = CollectiveKind::AllReduce;
  row.datatype = DataType::Float32;
  row.element_bytes = 4;
  row.count = 1024;
  row.seq = 0;
  row.tid = 1;
  row.send_address = 0x7f0000000000;
  row.send_bytes = 4096;
  row.send_alloc_id = send;
  row.send_offset = 0;
  row.recv_address = 0x7f0000000000 + 4096 + 4096;
  row.recv_bytes = 4096;
  row.recv_alloc_id = recv;
  row.recv_offset = 0;
  row.api_start_ns = 10'000;
  row.api_end_ns = 12'000;
  int64_t collective = trace.add(row);
  auto found = findings("uninitialized_read");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "collectives"), std::vector<int64_t>{collective});
  EXPECT_TRUE(rows_of(found[0], "um_events").empty());
}

// The chunked pipeline: one buffer; per chunk, a copy of that chunk in, then
// a kernel given base + offset that reads it. Its signature says it reads
// through the pointer, not how far: the chunks not yet copied are a possible
// read, not a certain one, and no correctness problem.
TEST_F(FlowRules, AChunkedPipelineReadsOnlyWhatWasCopiedIn) {
  constexpr int64_t kChunk = 1 << 20;
  constexpr int64_t kChunks = 8;
  int64_t host = buffer(AllocKind::PinnedHost, kChunks * kChunk);
  int64_t input = buffer(AllocKind::Device, kChunks * kChunk);
  int64_t output = buffer(AllocKind::Device, kChunks * kChunk);
  for (int64_t i = 0; i < kChunks; ++i) {
    int64_t start = 1'000'000 + i * 1'000'000;
    int64_t row = pinned_copy(host, input, kChunk, start);
    Statement offset = trace.db().prepare(
        "UPDATE memcpys SET src_offset = ?1, dst_offset = ?1 WHERE id = ?2");
    offset.bind(1, i * kChunk).bind(2, row).run();
    kernel("relax", start + 500'000, 100'000,
           {{input, A::Read, i * kChunk}, {output, A::Write, i * kChunk}});
  }
  EXPECT_TRUE(findings("uninitialized_read").empty());
}

// The same kernel given a chunk nothing copied in: every byte its pointer
// can reach holds no data, so its read is certainly of garbage.
TEST_F(FlowRules, APointerIntoMemoryNothingWroteIsStillFound) {
  constexpr int64_t kChunk = 1 << 20;
  int64_t host = buffer(AllocKind::PinnedHost, 2 * kChunk);
  int64_t input = buffer(AllocKind::Device, 2 * kChunk);
  int64_t output = buffer(AllocKind::Device, 2 * kChunk);
  pinned_copy(host, input, kChunk, 1'000'000);  // the first chunk only
  int64_t k = kernel("relax", 2'000'000, 100'000,
                     {{input, A::Read, kChunk}, {output, A::Write, kChunk}});
  auto found = findings("uninitialized_read");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "kernels"), std::vector<int64_t>{k});
  EXPECT_TRUE(found[0].correctness);
}

TEST_F(FlowRules, ReadAfterAMemsetIsInitialized) {
  int64_t input = buffer(AllocKind::Device, 4096);
  int64_t output = buffer(AllocKind::Device, 4096);
  testing::MemsetRow memset;
  memset.alloc_id = input;
  memset.alloc_offset = 0;
  memset.bytes = 4096;
  memset.stream = 7;
  memset.gpu_start_ns = 1'000;
  memset.gpu_end_ns = 2'000;
  trace.add(memset);
  kernel("reader", 10'000, 1'000, {{input, A::Read}, {output, A::Write}});
  EXPECT_TRUE(findings("uninitialized_read").empty());
}

TEST_F(FlowRules, DeviceMemoryWrittenAndNeverRead) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t unused = buffer(AllocKind::Device, 1000);
  int64_t row = pinned_copy(host, unused, 1000, 10'000);
  auto found = findings("written_never_read");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "memcpys"), std::vector<int64_t>{row});
  EXPECT_EQ(found[0].cost_ns, pinned_ns(1000));
  EXPECT_EQ(found[0].saving_ns, pinned_ns(1000));
  EXPECT_NE(found[0].what.find("never read"), std::string::npos);
}

// NCCL writes its work descriptors into its own buffers inside its calls;
// its kernels read them through pointers no argument shows.
TEST_F(FlowRules, WritesInsideAnNcclCallAreTheLibrarysOwn) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t descriptors = buffer(AllocKind::Device, 1000);
  nccl_call(9'000, 20'000);
  pinned_copy(host, descriptors, 1000, 10'000);
  EXPECT_TRUE(findings("written_never_read").empty());
}

// NCCL sets its communicator up in memory it maps itself (a memset, then a
// copy of its device structures), which its kernels read through pointers
// no argument shows; the program's own write nobody reads is still found.
TEST_F(FlowRules, WritesToALibrarysOwnMemoryAreNotTheProgramsWaste) {
  int64_t segment = buffer(AllocKind::Device, 8192);
  block(segment, 0, 8192);
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t communicator = buffer(AllocKind::VmmMapping, 1000);
  testing::MemsetRow memset;
  memset.alloc_id = communicator;
  memset.alloc_offset = 0;
  memset.bytes = 1000;
  memset.stream = 7;
  memset.gpu_start_ns = 1'000;
  memset.gpu_end_ns = 2'000;
  trace.add(memset);
  pinned_copy(host, communicator, 1000, 10'000);
  int64_t wasted = pinned_copy(host, segment, 1000, 30'000);
  auto found = findings("written_never_read");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "memcpys"), std::vector<int64_t>{wasted});
}

// PyTorch's chunk_cat gathers FSDP's gradients through an array of pointers
// (char**): a write it follows may have been read by it; one after it is
// still found.
TEST_F(FlowRules, AKernelReadingThroughPointerArraysMayReadEarlierWrites) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t pointers = buffer(AllocKind::Device, 64);
  int64_t gathered = buffer(AllocKind::Device, 1000);
  int64_t early = buffer(AllocKind::Device, 1000);
  int64_t later = buffer(AllocKind::Device, 1000);
  pinned_copy(host, pointers, 64, 5'000);
  pinned_copy(host, early, 1000, 10'000);
  kernel("chunk_cat(char**, char*, long)", 20'000, 1'000,
         {{pointers, A::Read}, {gathered, A::Write}});
  kernel("reduce", 30'000, 1'000, {{gathered, A::Read}, {sink(), A::Write}});
  int64_t unread = pinned_copy(host, later, 1000, 40'000);
  auto found = findings("written_never_read");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "memcpys"), std::vector<int64_t>{unread});
}

// Written by a synchronous cudaMemcpy, whose call holds the host 0.6 us
// beyond the DMA: dropping it saves the call.
TEST_F(FlowRules, DroppingASynchronousWriteNothingReadsSavesItsCall) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t unused = buffer(AllocKind::Device, 1000);
  copy(CopyKind::HtoD, host, unused, 1000, 10'000, pinned_ns(1000), MemoryKind::Pinned, false);
  auto found = findings("written_never_read");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, pinned_ns(1000) + 600);
  EXPECT_EQ(found[0].saving_ns, pinned_ns(1000) + 600);
}

TEST_F(FlowRules, AWriteOverwrittenBeforeAnyReadIsWasted) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t device = buffer(AllocKind::Device, 1000);
  testing::MemsetRow memset;
  memset.alloc_id = device;
  memset.alloc_offset = 0;
  memset.bytes = 1000;
  memset.stream = 7;
  memset.gpu_start_ns = 1'000;
  memset.gpu_end_ns = 6'000;
  int64_t zeroing = trace.add(memset);
  pinned_copy(host, device, 1000, 10'000);
  kernel("use", 20'000, 1'000, {{device, A::Read}, {sink(), A::Write}});
  auto found = findings("written_never_read");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "memsets"), std::vector<int64_t>{zeroing});
  EXPECT_EQ(found[0].cost_ns, 5'000);
  EXPECT_NE(found[0].what.find("overwritten before"), std::string::npos);
}

// A reduction's staging buffer (PyTorch's batch-norm statistics kernels
// take a `float volatile*`): each block writes it and the last one reads it
// back, through a pointer the kernel may read as well as write; no other
// op touches it. A possible read is no proof of waste: not reported. Where
// the kernel only writes there (--exact saw so), it is.
TEST_F(FlowRules, AKernelMayReadBackWhatItWroteThroughAPointerItMayRead) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t input = buffer(AllocKind::Device, 1000);
  int64_t staging = buffer(AllocKind::Device, 4096);
  pinned_copy(host, input, 1000, 1'000);
  kernel("collect_statistics(float const*, float volatile*, float*)", 10'000, 1'000,
         {{input, A::Read}, {staging, A::ReadWrite, 0, AccessSource::Assumed}, {sink(), A::Write}});
  EXPECT_TRUE(findings("written_never_read").empty());
}

TEST_F(FlowRules, AKernelOnlyWritingMemoryNothingReadsIsFound) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t input = buffer(AllocKind::Device, 1000);
  int64_t unread = buffer(AllocKind::Device, 4096);
  pinned_copy(host, input, 1000, 1'000);
  int64_t writer = kernel("make(float const*, float*, float*)", 10'000, 1'000,
                          {{input, A::Read}, {unread, A::Write}, {sink(), A::Write}});
  auto found = findings("written_never_read");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "kernels"), std::vector<int64_t>{writer});
  EXPECT_FALSE(found[0].saving_ns.has_value());
}

// A kernel that reads the data and writes nothing the trace resolved (its
// output pointer in no allocation) has no edge from it, only its read.
TEST_F(FlowRules, AReadByAnOpThatWroteNothingIsARead) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t device = buffer(AllocKind::Device, 1000);
  pinned_copy(host, device, 1000, 10'000);
  kernel("check(float const*)", 20'000, 1'000, {{device, A::Read}});
  EXPECT_TRUE(findings("written_never_read").empty());
}

TEST_F(FlowRules, WrittenThenReadIsFine) {
  int64_t host = buffer(AllocKind::PinnedHost, 1000);
  int64_t device = buffer(AllocKind::Device, 1000);
  pinned_copy(host, device, 1000, 10'000);
  kernel("use", 20'000, 1'000, {{device, A::Read}, {sink(), A::Write}});
  EXPECT_TRUE(findings("written_never_read").empty());
}

TEST_F(FlowRules, AllocationNeverUsed) {
  testing::AllocationRow row;
  row.kind = AllocKind::Device;
  row.address = 0x7e0000000000;
  row.bytes = 1 << 20;
  row.alloc_ns = 1'000;
  row.alloc_correlation_id = call("cudaMalloc", 1'000, 51'000);
  row.free_ns = 100'000;
  row.free_correlation_id = call("cudaFree", 100'000, 120'000);
  int64_t id = trace.add(row);
  auto found = findings("allocation_never_used");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "allocations"), std::vector<int64_t>{id});
  EXPECT_EQ(found[0].cost_ns, 70'000);
  EXPECT_EQ(found[0].saving_ns, 70'000);
  EXPECT_EQ(found[0].call_site, "cudaMalloc (thread 1)");
}

TEST_F(FlowRules, AnAllocationAKernelUsesIsUsed) {
  int64_t device = buffer(AllocKind::Device, 4096);
  kernel("fill", 10'000, 1'000, {{device, A::Write}});
  EXPECT_TRUE(findings("allocation_never_used").empty());
}

// A caching allocator's segment is used through its tensor blocks; a block
// nobody used is the framework's to keep, not the program's to remove.
TEST_F(FlowRules, ASegmentUsedThroughOneOfItsBlocksIsUsed) {
  int64_t segment = buffer(AllocKind::Device, 8192);
  for (int64_t offset : {0, 4096}) block(segment, offset, 4096);
  kernel("fill", 10'000, 1'000, {{segment, A::Write}});
  EXPECT_TRUE(findings("allocation_never_used").empty());
}

// Where a framework's allocator holds the program's data, a cudaMalloc or a
// mapped host buffer outside it is a library's own (a cuBLAS handle's
// workspace, NCCL's abort flag), which its kernels reach through pointers no
// launch argument shows: not the program's to remove.
TEST_F(FlowRules, MemoryOutsideTheFrameworksAllocatorIsALibrarysOwn) {
  int64_t segment = buffer(AllocKind::Device, 8192);
  block(segment, 0, 8192);
  kernel("fill", 10'000, 1'000, {{segment, A::Write}});
  allocated_by("cudaMalloc", AllocKind::Device, 1024, 20'000);
  allocated_by("cudaHostAlloc", AllocKind::MappedHost, 4, 100'000);
  EXPECT_TRUE(findings("allocation_never_used").empty());
}

// ... while a segment the framework made for a tensor nobody used is the
// program's unused tensor.
TEST_F(FlowRules, AFrameworkSegmentWhoseBlocksNobodyUsedIsNeverUsed) {
  int64_t used = buffer(AllocKind::Device, 8192);
  block(used, 0, 8192);
  kernel("fill", 10'000, 1'000, {{used, A::Write}});
  int64_t unused = allocated_by("cudaMalloc", AllocKind::Device, 8192, 20'000);
  block(unused, 0, 8192);
  auto found = findings("allocation_never_used");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(rows_of(found[0], "allocations"), std::vector<int64_t>{unused});
}

// ... but a segment holding only cuBLAS's workspace, which PyTorch's
// allocator hands out inside aten::mm and cuBLAS reaches through its
// handle, is the library's.
TEST_F(FlowRules, ASegmentHoldingALibrarysWorkspaceIsTheLibrarysOwn) {
  int64_t used = buffer(AllocKind::Device, 8192);
  block(used, 0, 8192);
  kernel("fill", 10'000, 1'000, {{used, A::Write}});
  testing::FrameworkRangeRow mm;
  mm.name = "aten::mm";
  mm.start_ns = 19'000;
  mm.end_ns = 80'000;
  trace.add(mm);
  int64_t workspace = allocated_by("cudaMalloc", AllocKind::Device, 8192, 20'000);
  trace.add_block(workspace, 0, 8192, 20'000);
  kernel("ampere_sgemm_128x64_tn", 75'000, 1'000, {{used, A::Read}, {sink(), A::Write}});
  EXPECT_TRUE(findings("allocation_never_used").empty());
}

// NCCL allocates its flags and buffers inside its own calls.
TEST_F(FlowRules, AnAllocationMadeInsideAnNcclCallIsTheLibrarysOwn) {
  nccl_call(1'000, 100'000);
  allocated_by("cudaHostAlloc", AllocKind::MappedHost, 4, 2'000);
  EXPECT_TRUE(findings("allocation_never_used").empty());
  allocated_by("cudaHostAlloc", AllocKind::MappedHost, 4, 200'000);
  EXPECT_EQ(findings("allocation_never_used").size(), 1u) << "the program's own, after the call";
}

// ... and inside ncclCommInitRank, before any collective: a plain C++
// program's NCCL buffers, which no framework allocator tells apart.
TEST_F(FlowRules, AnAllocationMadeWhileNcclInitializesIsTheLibrarysOwn) {
  CommunicatorRow comm;
  comm.library = CommLibrary::Nccl;
  comm.rank = 0;
  comm.nranks = 2;
  comm.created_ns = 50'000;
  comm.call_tid = 1;
  comm.call_start_ns = 1'000;
  comm.call_end_ns = 100'000;
  trace.add(comm);
  allocated_by("cudaMalloc", AllocKind::Device, 1 << 20, 2'000);
  EXPECT_TRUE(findings("allocation_never_used").empty());
  allocated_by("cudaMalloc", AllocKind::Device, 1 << 20, 200'000);
  EXPECT_EQ(findings("allocation_never_used").size(), 1u) << "the program's own, after the init";
}

// XLA times candidate kernels on buffers of its own while it compiles (its
// NVTX compile and pass ranges): those are its, not the program's; a buffer
// made after the compile is the program's.
TEST_F(FlowRules, AnAllocationMadeWhileXlaCompilesIsTheCompilersOwn) {
  xla_compiling(1'000, 500'000, 1);
  xla_compiling(100'000, 300'000, 1, "XlaPass:#name=config-assigner,module=jit_train_step,program_id=7#");
  allocated_by("cudaMalloc", AllocKind::Device, 64 << 20, 150'000);
  allocated_by("cudaHostAlloc", AllocKind::MappedHost, 4, 2'000);
  EXPECT_TRUE(findings("allocation_never_used").empty());
  allocated_by("cudaMalloc", AllocKind::Device, 1 << 20, 600'000);
  EXPECT_EQ(findings("allocation_never_used").size(), 1u) << "the program's own, after the compile";
}

}  // namespace
}  // namespace apptracer::diagnose
