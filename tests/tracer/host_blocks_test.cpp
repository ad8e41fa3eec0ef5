// Host blocks (tracer/host_blocks.h) without the interposed allocator: the
// hooks are called by hand with made-up addresses (nothing dereferences
// them), and the records they send are read back from the buffers.
#include "host/host_blocks.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "buffer/allocation_registry.h"
#include "buffer/record_buffers.h"
#include "buffer/string_table.h"
#include "store/trace_store.h"

namespace apptracer {
namespace {

class HostBlocksTest : public ::testing::Test {
 protected:
  void enable(bool store_all) { host_blocks::enable({4096, store_all}, buffers_); }

  // The records sent, without the thread record a thread's first one brings.
  std::vector<Record> drained() {
    std::vector<Record> out;
    buffers_.drain([&](const Record* r, size_t n) {
      for (size_t i = 0; i < n; ++i) {
        if (r[i].type != RecordType::Thread) out.push_back(r[i]);
      }
    });
    return out;
  }

  // CUDA touching an address, as the writer sees it: the block holding it
  // becomes a row (its record is sent) unless it is one already.
  bool touch(uint64_t address, uint64_t ns) {
    std::optional<Record> row = host_blocks::promote_for_writer(address, ns);
    if (row) buffers_.append(*row);
    return row.has_value();
  }

  // One for the whole program, as in the tracer: a thread attaches to its
  // buffers once.
  static inline RecordBuffers buffers_{1 << 20};
};

TEST_F(HostBlocksTest, TouchingAnInteriorPointerMakesTheBlockARowOnce) {
  enable(false);
  const uint64_t block = 0x100000000000;
  host_blocks::on_allocate(block, 8192, false);
  host_blocks::on_allocate(block + 0x10000, 100, false);  // below the threshold
  EXPECT_TRUE(drained().empty()) << "nothing is stored until CUDA touches a block";

  EXPECT_TRUE(touch(block + 100, UINT64_MAX));
  EXPECT_FALSE(touch(block + 8191, UINT64_MAX)) << "already a row";
  EXPECT_FALSE(touch(block + 8192, UINT64_MAX)) << "one past the end";
  EXPECT_FALSE(touch(block + 0x10000, UINT64_MAX)) << "small blocks are not tracked";
  std::vector<Record> rows = drained();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].type, RecordType::Allocation);
  EXPECT_EQ(rows[0].allocation.address, block);
  EXPECT_EQ(rows[0].allocation.bytes, 8192u);
  EXPECT_EQ(rows[0].allocation.kind, AllocKind::PageableHost);
  EXPECT_EQ(rows[0].allocation.alloc_tid, RecordBuffers::current_tid());
  EXPECT_EQ(host_blocks::registry().find(block + 8191, rows[0].allocation.ns)->address, block);
  EXPECT_EQ(rows[0].allocation.flags, 0u);
  uint64_t id = rows[0].allocation.alloc_id;
  EXPECT_EQ(host_blocks::registry().find(block + 4000, rows[0].allocation.ns)->id, id);

  host_blocks::on_free(block);
  rows = drained();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].type, RecordType::Free);
  EXPECT_EQ(rows[0].free.alloc_id, id);
  EXPECT_FALSE(touch(block + 100, UINT64_MAX)) << "freed";
}

TEST_F(HostBlocksTest, UnmappingPartOfARegionEndsIt) {
  enable(false);
  const uint64_t region = 0x100000200000;
  host_blocks::on_allocate(region, 1 << 20, true);
  ASSERT_TRUE(touch(region + 12345, UINT64_MAX));
  std::vector<Record> rows = drained();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].allocation.flags, 1u) << "an anonymous mmap";
  EXPECT_FALSE(host_blocks::on_unmap(region + (2 << 20), 4096)) << "outside every region";
  EXPECT_TRUE(host_blocks::on_unmap(region + 4096, 4096));
  rows = drained();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].type, RecordType::Free);
  EXPECT_FALSE(touch(region + 12345, UINT64_MAX));
}

TEST_F(HostBlocksTest, StoreAllMakesEveryLargeBlockARowAtOnce) {
  enable(true);
  const uint64_t block = 0x100000400000;
  host_blocks::on_allocate(block, 4096, false);
  host_blocks::on_allocate(block + 0x10000, 4095, false);
  std::vector<Record> rows = drained();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].allocation.bytes, 4096u);
  EXPECT_EQ(rows[0].allocation.alloc_tid, 0u) << "the recording thread allocated it";
  host_blocks::on_free(block);
  EXPECT_EQ(drained().size(), 1u);
  enable(false);
}

TEST_F(HostBlocksTest, TheWriterPromotesOnlyBlocksAllocatedBeforeTheLaunch) {
  enable(false);
  const uint64_t block = 0x100000500000;
  host_blocks::on_allocate(block, 8192, false);
  EXPECT_FALSE(host_blocks::promote_for_writer(block + 8, 1).has_value())
      << "a launch at t=1 cannot have been handed a block allocated now";
  std::optional<Record> row = host_blocks::promote_for_writer(block + 8, UINT64_MAX);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->allocation.address, block);
  EXPECT_FALSE(host_blocks::promote_for_writer(block + 8, UINT64_MAX).has_value())
      << "already a row";
  host_blocks::on_free(block);
  drained();
}

TEST_F(HostBlocksTest, HistogramCountsEverySizeClass) {
  enable(false);
  std::string before = host_blocks::histogram_json();
  host_blocks::on_allocate(0x100000600000, 3, false);
  std::string after = host_blocks::histogram_json();
  EXPECT_NE(before, after);
  EXPECT_NE(after.find("\"min_bytes\":2,\"max_bytes\":3"), std::string::npos) << after;
}

// A free can reach the writer before its allocation's row (another thread's
// buffer drained later); the row still ends up freed.
TEST(TraceStoreHost, FreeBeforeItsAllocationRowIsKept) {
  std::string path = ::testing::TempDir() + "host-free-" + std::to_string(getpid()) + ".db";
  unlink(path.c_str());
  AllocationRegistry registry;
  AllocationRegistry host_registry;
  {
    StringTable strings;
    TraceStore store(path, registry, strings, HostBlockResolution{&host_registry, nullptr});
    Record alloc{};
    alloc.type = RecordType::Allocation;
    alloc.allocation.alloc_id = host_registry.add(0x5000, 8192, AllocKind::PageableHost, -1, 10);
    alloc.allocation.address = 0x5000;
    alloc.allocation.bytes = 8192;
    alloc.allocation.ns = 10;
    alloc.allocation.device = -1;
    alloc.allocation.kind = AllocKind::PageableHost;
    Record free{};
    free.type = RecordType::Free;
    free.free.alloc_id = alloc.allocation.alloc_id;
    free.free.ns = 50;
    Record copy{};
    copy.type = RecordType::Memcpy;
    copy.correlation_id = copy.own_correlation_id = 1;
    copy.memcpy.src = 0x5000 + 16;
    copy.memcpy.bytes = 64;
    copy.memcpy.kind = CopyKind::HtoD;
    copy.memcpy.api_start_ns = 20;
    copy.memcpy.src_device = copy.memcpy.dst_device = -1;
    store.begin();
    store.write(&free, 1);
    store.write(&alloc, 1);
    store.write(&copy, 1);
    store.finish();
    store.commit();
  }
  Database db(path, Database::Mode::ReadOnly);
  Statement row = db.prepare("SELECT free_ns FROM allocations");
  ASSERT_TRUE(row.step());
  EXPECT_EQ(row.int64(0), 50);
  Statement copied = db.prepare("SELECT src_alloc_id, src_offset, src_memory,"
                                " src_numa_node IS NULL, dst_numa_node IS NULL FROM memcpys");
  ASSERT_TRUE(copied.step());
  EXPECT_GT(copied.int64(0), 0) << "resolved in the host registry";
  EXPECT_EQ(copied.int64(1), 16);
  EXPECT_EQ(copied.int64(2), static_cast<int64_t>(MemoryKind::Pageable));
  EXPECT_EQ(copied.int64(3), 1) << "no page of a made-up address is resident";
  EXPECT_EQ(copied.int64(4), 1);
  unlink(path.c_str());
}

}  // namespace
}  // namespace apptracer
