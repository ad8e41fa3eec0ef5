// Copies as issued: pageable memory, small copies, synchronous copies and
// memsets, NUMA placement. Each rule fires on its bad trace with exact cost
// and saving, and not on the fixed twin.
#include "diagnose_fixture.h"
#include "analyzer/diagnose/system_file_cost.h"

namespace apptracer::diagnose {
namespace {

class CopyRules : public DiagnoseTest {
 public:
  // Two pinned HtoD copies of different sizes: the measured model learns
  // the pinned path (2 us + bytes / 10 GB/s).
  void calibrate_pinned_path() {
    int64_t host = buffer(AllocKind::PinnedHost, 1'000'000);
    int64_t device = buffer(AllocKind::Device, 1'000'000);
    pinned_copy(host, device, 1000, 10'000);
    pinned_copy(host, device, 1'000'000, 20'000);
  }

  // 1 MB copied from pageable memory to the device, issued at 200 us, its
  // call 250 us long; its row.
  int64_t pageable_upload() {
    int64_t host = buffer(AllocKind::PageableHost, 1'000'000);
    int64_t device = buffer(AllocKind::Device, 1'000'000);
    return copy(CopyKind::HtoD, host, device, 1'000'000, 200'000, 250'000, MemoryKind::Pageable);
  }
};

TEST_F(CopyRules, PageableCopySavesWhatThePinnedPathPredicts) {
  calibrate_pinned_path();
  int64_t row = pageable_upload();
  auto found = findings("pageable_copy");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 250'000);
  ASSERT_TRUE(found[0].saving_ns);
  EXPECT_EQ(*found[0].saving_ns, 250'000 - pinned_ns(1'000'000));
  EXPECT_EQ(rows_of(found[0], "memcpys"), std::vector<int64_t>{row});
  EXPECT_EQ(found[0].call_site, "cudaMemcpyAsync (thread 1)");
  EXPECT_NE(found[0].what.find("cudaMemcpyAsync, which runs synchronously"), std::string::npos)
      << found[0].what;
  EXPECT_NE(found[0].fix.find("cudaMallocHost"), std::string::npos);
}

// XLA's autotuner copies its timings back from pageable memory on worker
// threads while the compiling thread waits in its compile range: the
// compiler's work, part of the compile's one finding. The same copy outside
// every compile range is the program's.
TEST_F(CopyRules, ACopyIssuedWhileXlaCompiledIsPartOfTheCompile) {
  calibrate_pinned_path();
  pageable_upload();
  auto found = findings("pageable_copy");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(found[0].startup);
  EXPECT_TRUE(findings("xla_compile").empty());
  xla_compiling(100'000, 900'000);  // on the compiling thread, not the copy's
  EXPECT_TRUE(findings("pageable_copy").empty());
  found = findings("xla_compile");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(found[0].startup);
  EXPECT_EQ(found[0].cost_ns, 800'000) << "a run without steps: the time XLA compiled";
  EXPECT_NE(found[0].what.find("pageable_copy 1"), std::string::npos) << found[0].what;
}

// A PyTorch program copies new CPU tensors of different sizes each step
// (images and labels): one finding for the thread that copies them, with
// PyTorch's fix; a C++ program's two host buffers are two findings.
TEST_F(CopyRules, PytorchPageableCopiesAreOneFindingPerCopyingThread) {
  calibrate_pinned_path();
  int64_t device = buffer(AllocKind::Device, 1'000'000);
  for (int step = 0; step < 2; ++step) {
    int64_t images = buffer(AllocKind::PageableHost, 1'000'000);
    int64_t labels = buffer(AllocKind::PageableHost, 64'000);
    copy(CopyKind::HtoD, images, device, 1'000'000, 200'000 + step * 1'000'000, 250'000,
         MemoryKind::Pageable);
    copy(CopyKind::HtoD, labels, device, 64'000, 500'000 + step * 1'000'000, 50'000,
         MemoryKind::Pageable);
  }
  EXPECT_EQ(findings("pageable_copy").size(), 2u);  // a C++ program: per buffer size
  block(device, 0, 4096);
  auto found = findings("pageable_copy");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 2 * (250'000 + 50'000));
  EXPECT_EQ(found[0].events, 4) << "each copy counts, for a one-off's ranking";
  EXPECT_NE(found[0].what.find("from pageable CPU tensors (4 buffer(s))"), std::string::npos) << found[0].what;
  EXPECT_NE(found[0].fix.find("pin_memory=True"), std::string::npos) << found[0].fix;
  EXPECT_NE(found[0].fix.find("non_blocking=True"), std::string::npos) << found[0].fix;
}

// A synchronous pageable copy: its call starts 150 us before the DMA, the
// first 50.5 us waiting for a kernel queued before it, then staging the
// data through a driver buffer. It holds the program 300.1 us (its call,
// less that wait), not its 250 us of GPU time; pinned, it takes 102 us.
TEST_F(CopyRules, APageableCopyCostsTheCallThatStagedIt) {
  calibrate_pinned_path();
  int64_t host = buffer(AllocKind::PageableHost, 1'000'000);
  int64_t device = buffer(AllocKind::Device, 1'000'000);
  kernel("earlier", 300'000, 100'000, {{device, AccessKind::Write}});
  int64_t row = copy(CopyKind::HtoD, host, device, 1'000'000, 450'000, 250'000,
                     MemoryKind::Pageable, false);
  trace.db().exec("UPDATE api_calls SET start_ns = 349500 WHERE correlation_id = "
                  "(SELECT call_correlation_id FROM memcpys WHERE id = " + std::to_string(row) + ")");
  auto found = findings("pageable_copy");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 300'100);
  EXPECT_EQ(found[0].saving_ns, 300'100 - pinned_ns(1'000'000));
}

// NCCL copies its work descriptors from pageable memory inside its calls:
// the library's own copies, which the program cannot pin.
TEST_F(CopyRules, APageableCopyInsideAnNcclCallIsTheLibrarysOwn) {
  calibrate_pinned_path();
  int64_t host = buffer(AllocKind::PageableHost, 1'000'000);
  int64_t device = buffer(AllocKind::Device, 1'000'000);
  nccl_call(199'000, 460'000);
  copy(CopyKind::HtoD, host, device, 1'000'000, 200'000, 250'000, MemoryKind::Pageable);
  EXPECT_TRUE(findings("pageable_copy").empty());
  copy(CopyKind::HtoD, host, device, 1'000'000, 600'000, 250'000, MemoryKind::Pageable);
  EXPECT_EQ(findings("pageable_copy").size(), 1u) << "the program's own copy after the call";
}

// NCCL copies its device structures from its pageable host memory into
// memory it mapped itself while it initializes, outside any NCCL call the
// trace records; where a framework's allocator holds the program's data,
// that memory is the library's, and so are the copies.
TEST_F(CopyRules, APageableCopyIntoALibrarysMemoryIsTheLibrarysOwn) {
  calibrate_pinned_path();
  int64_t segment = buffer(AllocKind::Device, 1'000'000);
  block(segment, 0, 1'000'000);
  int64_t host = buffer(AllocKind::PageableHost, 1'000'000);
  int64_t communicator = buffer(AllocKind::VmmMapping, 1'000'000);
  copy(CopyKind::HtoD, host, communicator, 1'000'000, 200'000, 250'000, MemoryKind::Pageable);
  EXPECT_TRUE(findings("pageable_copy").empty());
  copy(CopyKind::HtoD, host, segment, 1'000'000, 600'000, 250'000, MemoryKind::Pageable);
  EXPECT_EQ(findings("pageable_copy").size(), 1u) << "the program's own copy into its tensor";
}

TEST_F(CopyRules, PinnedTwinHasNoPageableCopy) {
  calibrate_pinned_path();
  int64_t host = buffer(AllocKind::PinnedHost, 1'000'000);
  int64_t device = buffer(AllocKind::Device, 1'000'000);
  pinned_copy(host, device, 1'000'000, 200'000);
  EXPECT_TRUE(findings("pageable_copy").empty());
}

TEST_F(CopyRules, WithoutAPinnedPathTheSavingIsUnknownAndSaysWhy) {
  pageable_upload();
  auto found = findings("pageable_copy");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(found[0].saving_ns);
  EXPECT_NE(found[0].estimate.find("--system"), std::string::npos) << found[0].estimate;
}

// The chunked pipeline: 229 MiB copied in 16 pageable chunks took 180 ms;
// its pinned twin measured 12 ms. Without --system and with no pinned copy
// in the trace, the default model (an H100's PCIe Gen5 x16 at 80%) prices
// the saving within 25% of the measured 168 ms, and says it was used.
TEST_F(CopyRules, WithoutASystemFileTheDefaultModelPricesPinning) {
  trace.db().exec("UPDATE devices SET cc_major = 9, cc_minor = 0");
  constexpr int64_t kChunk = (int64_t{229} << 20) / 16;
  int64_t host = buffer(AllocKind::PageableHost, 16 * kChunk);
  int64_t device = buffer(AllocKind::Device, 16 * kChunk);
  for (int64_t chunk = 0; chunk < 16; ++chunk) {
    copy(CopyKind::HtoD, host, device, kChunk, 1'000'000 + chunk * 12'000'000, 11'250'000,
         MemoryKind::Pageable);
  }
  trace::Trace model(trace.db());
  TraceFacts facts = read_trace_facts(model);
  LinkModel link = choose_link_model(facts, "");
  EXPECT_NE(link.name.find("PCIe Gen5 x16 nominal (63.00 GB/s per direction) for device(s) 0: "
                           "pinned copies at 80% of it, pageable at 33% of pinned"),
            std::string::npos)
      << link.name;
  std::vector<Finding> found;
  for (Finding& f : diagnose(facts, *link.cost)) {
    if (f.rule == "pageable_copy") found.push_back(f);
  }
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 180'000'000);
  ASSERT_TRUE(found[0].saving_ns);
  constexpr double kMeasuredSaving = 180e6 - 12e6;
  EXPECT_NEAR(*found[0].saving_ns, kMeasuredSaving, 0.25 * kMeasuredSaving);
  EXPECT_NE(found[0].estimate.find("default model: HtoD pinned, device 0 over PCIe "
                                   "Gen5 x16 nominal"),
            std::string::npos)
      << found[0].estimate;
}

TEST_F(CopyRules, ASystemFileGivesThePinnedPath) {
  pageable_upload();
  model::SystemModel machine;
  machine.paths.push_back({*model::LinkPath::parse("HtoD.pinned.gpu0"), {},
                           model::LinkModel(1000, {{4, 5.0}, {65536, 20.0}}), ""});
  SystemFileCost system("test.json", machine);
  auto found = findings("pageable_copy", &system);
  ASSERT_EQ(found.size(), 1u);
  ASSERT_TRUE(found[0].saving_ns);
  EXPECT_EQ(*found[0].saving_ns, 250'000 - (1000 + 1'000'000 / 20));
  EXPECT_NE(found[0].estimate.find("system file test.json"), std::string::npos);
}

// The copy took 250 us where the system file's pageable path says 501 us:
// the machine is faster than the file, and so is the pinned copy, by the
// same ratio (51 us -> 25.4 us), as whatif --pin prices it.
TEST_F(CopyRules, ACopyFasterThanItsPageablePathIsFasterPinnedByTheSameRatio) {
  pageable_upload();
  model::SystemModel machine;
  machine.paths.push_back({*model::LinkPath::parse("HtoD.pinned.gpu0"), {},
                           model::LinkModel(1000, {{4, 20.0}, {65536, 20.0}}), ""});
  machine.paths.push_back({*model::LinkPath::parse("HtoD.pageable.gpu0"), {},
                           model::LinkModel(1000, {{4, 2.0}, {65536, 2.0}}), ""});
  SystemFileCost system("test.json", machine);
  auto found = findings("pageable_copy", &system);
  ASSERT_EQ(found.size(), 1u);
  ASSERT_TRUE(found[0].saving_ns);
  EXPECT_EQ(*found[0].saving_ns, 250'000 - 25'449);  // 51,000 * 250,000 / 501,000
}

TEST_F(CopyRules, SmallCopiesSaveWhatOneBatchedCopyCosts) {
  calibrate_pinned_path();
  int64_t host = buffer(AllocKind::PinnedHost, 20'000);
  int64_t device = buffer(AllocKind::Device, 20'000);
  std::vector<int64_t> rows;
  for (int i = 0; i < 20; ++i) rows.push_back(pinned_copy(host, device, 1000, 3'000'000 + i * 10'000));
  auto found = findings("small_copies");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 20 * pinned_ns(1000));
  ASSERT_TRUE(found[0].saving_ns);
  EXPECT_EQ(*found[0].saving_ns, 20 * pinned_ns(1000) - pinned_ns(20'000));
  EXPECT_EQ(rows_of(found[0], "memcpys"), rows);
}

// A step's scalars (a loss, a norm) read back one by one into the same
// pinned buffer: one problem, whose fix batches both sources' copies.
TEST_F(CopyRules, ReadBacksOfSeveralTensorsIntoOneBufferAreOneFinding) {
  calibrate_pinned_path();
  int64_t loss = buffer(AllocKind::Device, 4);
  int64_t norm = buffer(AllocKind::Device, 4);
  int64_t scalars = buffer(AllocKind::PinnedHost, 8);
  int64_t elsewhere = buffer(AllocKind::PinnedHost, 8);
  std::vector<int64_t> rows;
  for (int i = 0; i < 10; ++i) {
    int64_t at = 3'000'000 + i * 20'000;
    rows.push_back(copy(CopyKind::DtoH, loss, scalars, 4, at, pinned_ns(4)));
    rows.push_back(copy(CopyKind::DtoH, norm, scalars, 4, at + 10'000, pinned_ns(4)));
  }
  for (int i = 0; i < 16; ++i)
    copy(CopyKind::DtoH, loss, elsewhere, 4, 4'000'000 + i * 20'000, pinned_ns(4));
  auto found = findings("small_copies");
  ASSERT_EQ(found.size(), 2u);
  auto batched = std::find_if(found.begin(), found.end(),
                              [](const Finding& f) { return f.names[0].rfind("20 x", 0) == 0; });
  ASSERT_NE(batched, found.end());
  EXPECT_EQ(rows_of(*batched, "memcpys"), rows);
  EXPECT_NE(batched->what.find("from 2 buffers (alloc #" + std::to_string(loss)), std::string::npos)
      << batched->what;
  EXPECT_EQ(batched->cost_ns, 20 * pinned_ns(4));
}

TEST_F(CopyRules, OneBatchedCopyIsNotSmallCopies) {
  calibrate_pinned_path();
  int64_t host = buffer(AllocKind::PinnedHost, 20'000);
  int64_t device = buffer(AllocKind::Device, 20'000);
  pinned_copy(host, device, 20'000, 3'000'000);
  EXPECT_TRUE(findings("small_copies").empty());
}

// Two blocking cudaMemcpy calls of 100 us each; the host works 30 us after
// the first and 200 us after the second before its next CUDA call.
TEST_F(CopyRules, SyncCopiesCostTheBlockedTimeAndSaveTheHostWorkAfterThem) {
  int64_t host = buffer(AllocKind::PinnedHost, 1'000'000);
  int64_t device = buffer(AllocKind::Device, 1'000'000);
  int64_t a = copy(CopyKind::HtoD, host, device, 1000, 100'000, 99'800, MemoryKind::Pinned, false);
  call("cudaGetLastError", 200'000 + 30'000, 230'100);
  int64_t b = copy(CopyKind::HtoD, host, device, 1000, 300'000, 99'800, MemoryKind::Pinned, false);
  call("cudaGetLastError", 400'000 + 200'000, 600'100);
  auto found = findings("sync_copy");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 2 * 100'400);
  EXPECT_EQ(found[0].events, 2);
  ASSERT_TRUE(found[0].saving_ns);
  EXPECT_EQ(*found[0].saving_ns, (230'000 - 199'900) + 100'400);
  EXPECT_EQ(rows_of(found[0], "memcpys"), (std::vector<int64_t>{a, b}));
  EXPECT_NE(found[0].fix.find("cudaMemcpyAsync"), std::string::npos);
}

TEST_F(CopyRules, AsyncCopiesAreNotSyncCopies) {
  int64_t host = buffer(AllocKind::PinnedHost, 1'000'000);
  int64_t device = buffer(AllocKind::Device, 1'000'000);
  copy(CopyKind::HtoD, host, device, 1000, 100'000, 99'800);
  copy(CopyKind::HtoD, host, device, 1000, 300'000, 99'800);
  EXPECT_TRUE(findings("sync_copy").empty());
}

TEST_F(CopyRules, SyncMemsetsBlockingTheHost) {
  int64_t device = buffer(AllocKind::Device, 1'000'000);
  for (bool async : {false, true}) {
    for (int i = 0; i < 2; ++i) {
      testing::MemsetRow row;
      row.alloc_id = device;
      row.alloc_offset = 0;
      row.bytes = 1'000'000;
      row.is_async = async;
      row.stream = 7;
      int64_t start = (async ? 2'000'000 : 0) + 100'000 + i * 300'000;
      row.call_correlation_id = call(async ? "cudaMemsetAsync" : "cudaMemset", start, start + 80'000);
      row.gpu_start_ns = start + 1000;
      row.gpu_end_ns = start + 70'000;
      trace.add(row);
    }
  }
  call("cudaDeviceSynchronize", 3'000'000, 3'000'100);
  auto found = findings("sync_memset");
  ASSERT_EQ(found.size(), 1u);  // the cudaMemsetAsync calls are not in it
  EXPECT_EQ(found[0].cost_ns, 160'000);
  EXPECT_EQ(found[0].events, 2);
  EXPECT_EQ(rows_of(found[0], "memsets"), (std::vector<int64_t>{1, 2}));
  // After each, the host worked until its next call (at most the time blocked).
  EXPECT_EQ(*found[0].saving_ns, 80'000 + 80'000);
  EXPECT_NE(found[0].fix.find("cudaMemsetAsync"), std::string::npos);
}

// A first memset of fresh managed memory blocks 10 ms (it maps the pages),
// three more 100 us each; the host works 300 us after each. Made
// asynchronous, the first runs under all four stretches of host work, not
// only the one right after it: 1.2 ms go, and the rest is waited for at the
// synchronization.
TEST_F(CopyRules, SyncMemsetsQueuedWorkRunsUnderTheHostWorkAfterLaterOnes) {
  int64_t managed = buffer(AllocKind::Managed, 1'000'000);
  int64_t start = 100'000;
  for (int64_t blocked : {10'000'000, 100'000, 100'000, 100'000}) {
    testing::MemsetRow row;
    row.alloc_id = managed;
    row.alloc_offset = 0;
    row.bytes = 1'000'000;
    row.is_async = false;
    row.stream = 7;
    row.call_correlation_id = call("cudaMemset", start, start + blocked);
    row.gpu_start_ns = start + 1000;
    row.gpu_end_ns = start + blocked - 1000;
    trace.add(row);
    start += blocked + 300'000;
  }
  call("cudaStreamSynchronize", start, start + 9'000'000);
  auto found = findings("sync_memset");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 10'300'000);
  EXPECT_EQ(found[0].saving_ns, 4 * 300'000);
}

TEST_F(CopyRules, HostBufferOnAFarNumaNode) {
  calibrate_pinned_path();
  trace.db().exec("UPDATE memcpys SET src_numa_node = 0");  // the calibration copies: node 0
  int64_t host = buffer(AllocKind::PinnedHost, 1'000'000);
  int64_t device = buffer(AllocKind::Device, 1'000'000);
  for (int64_t node : {int64_t{1}, int64_t{0}}) {
    testing::MemcpyRow row;
    row.kind = CopyKind::HtoD;
    row.bytes = 1'000'000;
    row.src_alloc_id = host;
    row.dst_alloc_id = device;
    row.src_memory = MemoryKind::Pinned;
    row.src_numa_node = node;
    row.stream = 7;
    row.is_async = 1;
    row.gpu_start_ns = 1'000'000 + node * 1'000'000;
    row.gpu_end_ns = *row.gpu_start_ns + (node == 1 ? 150'000 : pinned_ns(1'000'000));
    trace.add(row);
  }
  auto found = findings("numa_far_host_buffer");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 150'000);
  ASSERT_TRUE(found[0].saving_ns);
  // Predicted from the copies from node 0: 2 us + bytes / 10 GB/s.
  EXPECT_EQ(*found[0].saving_ns, 150'000 - pinned_ns(1'000'000));
  EXPECT_NE(found[0].fix.find("--membind=0"), std::string::npos);
}

TEST_F(CopyRules, HostBufferOnTheGpusNodeIsFine) {
  int64_t host = buffer(AllocKind::PinnedHost, 1'000'000);
  int64_t device = buffer(AllocKind::Device, 1'000'000);
  testing::MemcpyRow row;
  row.kind = CopyKind::HtoD;
  row.bytes = 1'000'000;
  row.src_alloc_id = host;
  row.dst_alloc_id = device;
  row.src_memory = MemoryKind::Pinned;
  row.src_numa_node = 0;
  row.gpu_start_ns = 1'000'000;
  row.gpu_end_ns = 1'150'000;
  trace.add(row);
  EXPECT_TRUE(findings("numa_far_host_buffer").empty());
}

}  // namespace
}  // namespace apptracer::diagnose
