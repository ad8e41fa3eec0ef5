// Kernels' stores into another GPU's memory over peer access, priced by a
// what-if (kernel_traffic.h): as recorded in the baseline, their duration
// changed by bytes / the what-if's bandwidth - bytes / the baseline's where
// a change alters their path, never below their time without the traffic,
// and a note where a system prices no such path. The peer path's bandwidth
// is chosen so 16 MiB take 1 ms. The kernel is on the critical path: the
// run's total moves with its duration.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "analyzer/whatif/whatif_store.h"
#include "whatif_fixture.h"

namespace apptracer::whatif {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kOn1 = 0x7f1000000000;
constexpr const char* kPeer = "PtoP.peer.gpu0.gpu1 0 16.777216";  // 16 MiB in 1 ms

class PeerStores : public WhatifTest {
 public:
  // GPU 1's 16 MiB buffer, and a kernel on GPU 0 that stores into it for
  // `duration` ns, then a device synchronization.
  int64_t store_kernel(int64_t duration) {
    testing::AllocationRow buffer;
    buffer.kind = AllocKind::Device;
    buffer.device = 1;
    buffer.address = kOn1;
    buffer.bytes = 16 * kMiB;
    on1_ = trace_->add(buffer);
    int64_t k = kernel(call("cudaLaunchKernel", 100, 110), 100, 200, 200 + duration);
    testing::KernelArgRow arg;
    arg.kernel_id = k;
    arg.alloc_id = on1_;
    arg.alloc_offset = 0;
    arg.access = AccessKind::Write;
    arg.access_source = AccessSource::Sanitizer;
    trace_->add(arg);
    sync(call("cudaDeviceSynchronize", 120, 210 + duration), SyncKind::Device, 120, 210 + duration);
    return k;
  }

  const TransferSummary& stores(const WhatifResult& result) {
    for (const TransferSummary& t : result.transfers) {
      if (t.kernel_traffic && t.kind == "kernel peer stores") return t;
    }
    throw std::runtime_error("no row of kernel peer stores");
  }

  WhatifResult with_link(const std::string& link) {
    WhatifOptions options;
    options.links = {link};
    return run(options);
  }

  int64_t on1_ = 0;
};

TEST_F(PeerStores, WithoutChangesTheKernelKeepsItsRecordedTime) {
  store_kernel(3'000'000);
  write_system({kPeer});
  WhatifResult result = run();
  const TransferSummary& row = stores(result);
  EXPECT_EQ(row.path, "PtoP.peer.gpu0.gpu1");
  EXPECT_EQ(row.bytes, 16 * kMiB);
  EXPECT_EQ(row.copies, 1);
  EXPECT_TRUE(row.bytes_bound);
  EXPECT_EQ(row.baseline_by, "PtoP.peer.gpu0.gpu1");
  EXPECT_EQ(row.recorded_ns, 3'000'000);  // the kernel's duration
  EXPECT_NEAR(row.baseline_ns, 1'000'000, 1);  // its stores at the path's bandwidth
  EXPECT_EQ(row.predicted_ns, row.baseline_ns);
  EXPECT_EQ(result.baseline_ns, result.recorded_ns);
  EXPECT_EQ(result.predicted_ns, result.recorded_ns);
}

// Half the bandwidth: the 1 ms of peer stores take 2 ms.
TEST_F(PeerStores, ASlowerPeerLinkLengthensTheKernel) {
  store_kernel(3'000'000);
  write_system({kPeer});
  WhatifResult result = with_link("PtoP.peer=bw:8.388608");
  EXPECT_NEAR(stores(result).predicted_ns, 2'000'000, 1);
  EXPECT_EQ(result.baseline_ns, result.recorded_ns);
  EXPECT_NEAR(result.predicted_ns - result.baseline_ns, 1'000'000, 1);
  bool bound_noted = false;
  for (const std::string& note : result.notes) bound_noted |= note.find("a bound") != std::string::npos;
  EXPECT_TRUE(bound_noted) << "the repriced bytes are a bound";
}

// A faster link cannot take the kernel below its time without the traffic:
// recorded 0.5 ms, its 1 ms of modeled traffic gone, nothing is left.
TEST_F(PeerStores, AFasterPeerLinkNeverTakesTheKernelBelowItsTimeWithoutTheTraffic) {
  store_kernel(500'000);
  write_system({kPeer});
  WhatifResult result = with_link("PtoP.peer=bw:167.77216");
  EXPECT_NEAR(stores(result).predicted_ns, 100'000, 1);
  EXPECT_NEAR(result.predicted_ns - result.baseline_ns, -500'000, 1);
}

// --exact: only the 8 MiB the kernel touched are repriced.
TEST_F(PeerStores, ExactBytesArePricedAsTouched) {
  int64_t k = store_kernel(3'000'000);
  ExactLaunchRow launch;
  launch.id = 1;
  launch.kernel_id = k;
  launch.pages = 2048;
  launch.approximate = 0;
  launch.incomplete = ExactGap::None;
  trace_->add(launch);
  ExactAccessRow range;
  range.launch_id = 1;
  range.alloc_id = on1_;
  range.alloc_offset = 0;
  range.access = AccessKind::Write;
  range.lo = kOn1;
  range.hi = kOn1 + 8 * kMiB;
  range.approximate = 0;
  trace_->add(range);
  write_system({kPeer});
  WhatifResult result = with_link("PtoP.peer=bw:8.388608");
  EXPECT_FALSE(stores(result).bytes_bound);
  EXPECT_EQ(stores(result).bytes, 8 * kMiB);
  EXPECT_NEAR(stores(result).predicted_ns, 1'000'000, 1);
  EXPECT_NEAR(result.predicted_ns - result.baseline_ns, 500'000, 1);
}

// Another machine with a faster peer path.
TEST_F(PeerStores, AnotherMachinesPeerPathPricesIt) {
  store_kernel(3'000'000);
  write_system({kPeer});
  std::string other = base_ + "_other.json";
  write_system({"PtoP.peer.gpu0.gpu1 0 33.554432"}, other);
  WhatifOptions options;
  options.system2_path = other;
  WhatifResult result = run(options);
  EXPECT_NEAR(stores(result).predicted_ns, 500'000, 1);
  EXPECT_NEAR(result.predicted_ns - result.baseline_ns, -500'000, 1);
}

// A machine without the path keeps the kernel as recorded, and says so.
TEST_F(PeerStores, AMachineWithoutThePathKeepsTheKernelAndSaysSo) {
  store_kernel(3'000'000);
  write_system({kPeer});
  std::string other = base_ + "_other.json";
  write_system({"DtoD.gpu0 0 1000"}, other);
  WhatifOptions options;
  options.system2_path = other;
  WhatifResult result = run(options);
  EXPECT_EQ(result.predicted_ns, result.baseline_ns);
  EXPECT_EQ(stores(result).whatif_by, "");
  std::string expected = "what-if: kernels' loads and stores over PtoP.peer.gpu0.gpu1 keep their recorded time: " +
                         other + " models no such path";
  EXPECT_NE(std::find(result.notes.begin(), result.notes.end(), expected), result.notes.end())
      << ::testing::PrintToString(result.notes);
}

// --store: the rows say they are kernels' traffic, also into a
// whatif_transfers table an older apptracer made without those columns.
TEST_F(PeerStores, StoredRowsSayTheyAreKernelTraffic) {
  store_kernel(3'000'000);
  write_system({kPeer});
  WhatifResult result = with_link("PtoP.peer=bw:8.388608");
  store_whatif(trace_->db(), result);
  trace_->db().exec("ALTER TABLE whatif_transfers DROP COLUMN kernel_traffic;"
                    "ALTER TABLE whatif_transfers DROP COLUMN bytes_bound");
  store_whatif(trace_->db(), result);
  Statement rows = trace_->db().prepare("SELECT path, kernel_traffic, bytes_bound, copies FROM whatif_transfers");
  ASSERT_TRUE(rows.step());
  EXPECT_EQ(rows.text(0), "PtoP.peer.gpu0.gpu1");
  EXPECT_EQ(rows.text(1), "kernel peer stores");
  EXPECT_EQ(rows.int64(2), 1);
  EXPECT_EQ(rows.int64(3), 1);
  EXPECT_FALSE(rows.step());
}

}  // namespace
}  // namespace apptracer::whatif
