// Host blocks (tracer/host_blocks.h) without the interposed allocator: the
// hooks are called by hand with made-up addresses (nothing dereferences
// them), and the records they send are read back from the buffers.
#include "host/host_blocks.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "buffer/allocation_registry.h"
#include "buffer/record_buffers.h"
#include "buffer/string_table.h"
#include "launch_records.h"
#include "scratch_dir.h"
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
    std::optional<PromotedBlock> block = host_blocks::promote_for_writer(address, ns);
    if (block) buffers_.append(block->allocation);
    return block.has_value();
  }

  // Writes `records` into a new trace at `path` as the tracer's writer does,
  // host blocks resolving (and becoming rows) through host_blocks.
  static void store(const std::string& path, const std::vector<Record>& records,
                    AllocationRegistry& cuda) {
    StringTable strings;
    TraceStore store(path, cuda, strings,
                     HostBlockResolution{&host_blocks::registry(), host_blocks::promote_for_writer,
                                         host_blocks::forget_freed_before});
    store.begin();
    store.write(records.data(), records.size());
    store.finish();
    store.commit();
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
  uint64_t lookups = host_blocks::lookups();
  EXPECT_FALSE(host_blocks::promote_for_writer(0x100, UINT64_MAX).has_value()) << "no block's region";
  EXPECT_EQ(host_blocks::lookups(), lookups) << "not looked up: no shard locked";
  EXPECT_FALSE(host_blocks::promote_for_writer(block + 8, 1).has_value())
      << "a launch at t=1 cannot have been handed a block allocated now";
  std::optional<PromotedBlock> row = host_blocks::promote_for_writer(block + 8, UINT64_MAX);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->allocation.allocation.address, block);
  EXPECT_EQ(row->free_ns, 0u) << "live";
  EXPECT_FALSE(host_blocks::promote_for_writer(block + 8, UINT64_MAX).has_value())
      << "already a row";
  EXPECT_EQ(host_blocks::lookups() - lookups, 3u);
  host_blocks::on_free(block);
  drained();
}

// The writer searches only the shards a block holding the address can lie
// in: a block that starts in the region below, and one larger than a region,
// are still found from an address far into them.
TEST_F(HostBlocksTest, TheWriterFindsBlocksThatStartInAnotherRegion) {
  enable(false);
  const uint64_t region = uint64_t{1} << 26;
  const uint64_t crossing = 0x200000000000 + region - 4096;  // 1 MiB across a region's end
  host_blocks::on_allocate(crossing, 1 << 20, false);
  const uint64_t large = 0x300000000000 + 0x4000;  // four regions and more
  host_blocks::on_allocate(large, 5 * region, false);
  std::optional<PromotedBlock> row = host_blocks::promote_for_writer(crossing + 8192, UINT64_MAX);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->allocation.allocation.address, crossing);
  row = host_blocks::promote_for_writer(large + 4 * region + 64, UINT64_MAX);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->allocation.allocation.address, large);
  EXPECT_FALSE(host_blocks::may_contain(0x280000000000)) << "between the blocks";
  host_blocks::on_free(crossing);
  host_blocks::on_free(large);
  drained();
}

// The writer reads a copy after the program freed its buffer (at exit,
// always): the block that held the address when the copy was entered is
// still found, and becomes a row that ended at its free.
// Large blocks have a shard of their own; their free, which does not say
// the size, still finds them, and small blocks' lookups never walk past them.
TEST_F(HostBlocksTest, ALargeBlockFreedBeforeItsTouchWasReadStillBecomesARow) {
  enable(false);
  const uint64_t large = 0x400000000000;
  host_blocks::on_allocate(large, 8 << 20, false);
  for (uint64_t i = 0; i < 100; ++i) host_blocks::on_allocate(large + (16 << 20) + i * 8192, 4096, false);
  uint64_t copied_ns = now_ns();
  host_blocks::on_free(large);
  for (uint64_t i = 0; i < 100; ++i) host_blocks::on_free(large + (16 << 20) + i * 8192);
  std::optional<PromotedBlock> row = host_blocks::promote_for_writer(large + (5 << 20), copied_ns);
  ASSERT_TRUE(row.has_value()) << "the large block, freed since";
  EXPECT_EQ(row->allocation.allocation.bytes, uint64_t{8} << 20);
  EXPECT_GT(row->free_ns, 0u);
  row = host_blocks::promote_for_writer(large + (16 << 20) + 99 * 8192 + 8, copied_ns);
  ASSERT_TRUE(row.has_value()) << "a small one beside it";
  EXPECT_EQ(row->allocation.allocation.bytes, 4096u);
  drained();
}

TEST_F(HostBlocksTest, ABlockFreedBeforeTheWriterSawItsTouchStillBecomesARow) {
  enable(false);
  const uint64_t block = 0x100000700000;
  host_blocks::on_allocate(block, 8192, false);
  uint64_t copied_ns = now_ns();
  host_blocks::on_free(block);
  uint64_t after_free_ns = now_ns();
  host_blocks::on_allocate(block, 16384, false);  // the address reused at once
  EXPECT_TRUE(drained().empty());

  std::optional<PromotedBlock> row = host_blocks::promote_for_writer(block + 100, copied_ns);
  ASSERT_TRUE(row.has_value()) << "the freed block held the address when it was copied";
  EXPECT_EQ(row->allocation.allocation.bytes, 8192u) << "the old block, not the new one";
  EXPECT_GE(row->free_ns, copied_ns);
  EXPECT_LE(row->free_ns, after_free_ns);
  EXPECT_EQ(row->numa_node, -1) << "small blocks' pages are not looked at when freed";
  uint64_t id = row->allocation.allocation.alloc_id;
  std::optional<AllocationInfo> then = host_blocks::registry().find(block + 100, copied_ns);
  ASSERT_TRUE(then.has_value());
  EXPECT_EQ(then->id, id) << "resolves while it lived";
  EXPECT_FALSE(host_blocks::registry().find(block + 100, after_free_ns).has_value())
      << "and not after its free (the new block is no row)";
  EXPECT_FALSE(host_blocks::promote_for_writer(block + 100, copied_ns).has_value())
      << "a row already";

  row = host_blocks::promote_for_writer(block + 9000, now_ns());
  ASSERT_TRUE(row.has_value()) << "the new, live block";
  EXPECT_EQ(row->allocation.allocation.bytes, 16384u);
  EXPECT_EQ(row->free_ns, 0u);
  host_blocks::on_free(block);
  drained();
}

TEST_F(HostBlocksTest, FreedBlocksAreForgottenOnceTheWriterHasPassedTheirFree) {
  enable(false);
  const uint64_t block = 0x100000800000;
  host_blocks::on_allocate(block, 8192, false);
  uint64_t copied_ns = now_ns();
  host_blocks::on_free(block);
  host_blocks::forget_freed_before(copied_ns);
  host_blocks::forget_freed_before(0);
  EXPECT_TRUE(host_blocks::promote_for_writer(block, copied_ns).has_value())
      << "freed after the horizon: kept";
  host_blocks::on_allocate(block, 8192, false);
  copied_ns = now_ns();
  host_blocks::on_free(block);
  host_blocks::forget_freed_before(now_ns() + 1);
  EXPECT_FALSE(host_blocks::promote_for_writer(block, copied_ns).has_value()) << "forgotten";
  EXPECT_EQ(host_blocks::not_kept_blocks(), 0u);
  drained();
}

// The writer's lookups and passes run beside the program's frees (the
// frees handed to the writer in short holds of the lock the hooks take):
// every block freed is kept, found while kept, and forgotten, and the room
// it took is given back.
TEST_F(HostBlocksTest, TheWritersLookupsBesideTheProgramsFreesKeepEveryFreedBlockCounted) {
  enable(false);
  const uint64_t base = 0x100000c00000;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    while (!done.load()) {
      host_blocks::promote_for_writer(base + 8, 1);  // before any block: never a row
      host_blocks::forget_freed_before(now_ns() - 1'000'000);
    }
  });
  for (int i = 0; i < 20000; ++i) {
    uint64_t block = base + static_cast<uint64_t>(i % 512) * 16384;
    host_blocks::on_allocate(block, 8192, false);
    host_blocks::on_free(block);
  }
  done.store(true);
  writer.join();
  EXPECT_EQ(host_blocks::not_kept_blocks(), 0u);
  host_blocks::forget_freed_before(now_ns() + 1);
  const uint64_t last = base + 512 * 16384;
  host_blocks::on_allocate(last, 8192, false);
  uint64_t copied_ns = now_ns();
  host_blocks::on_free(last);
  std::optional<PromotedBlock> row = host_blocks::promote_for_writer(last + 8, copied_ns);
  ASSERT_TRUE(row.has_value()) << "freed after everything was forgotten: kept";
  EXPECT_EQ(row->allocation.allocation.address, last);
  host_blocks::forget_freed_before(now_ns() + 1);
  drained();
}

// A free is logged, and the writer indexes the log when it looks: a block
// freed after it last looked is found as well as one indexed before, each
// with its own lifetime, and one made a row stays in the index (taken) until
// forgotten without becoming a row again.
TEST_F(HostBlocksTest, BlocksFreedBeforeAndAfterTheWriterLookedBecomeRowsWithTheirLifetimes) {
  enable(false);
  const uint64_t first = 0x100000b00000;
  const uint64_t second = 0x100000b10000;
  host_blocks::on_allocate(first, 8192, false);
  uint64_t first_copied_ns = now_ns();
  host_blocks::on_free(first);
  uint64_t first_freed_ns = now_ns();
  std::optional<PromotedBlock> row = host_blocks::promote_for_writer(first + 8, first_copied_ns);
  ASSERT_TRUE(row.has_value());
  EXPECT_GE(row->free_ns, first_copied_ns);
  EXPECT_LE(row->free_ns, first_freed_ns);

  host_blocks::on_allocate(second, 4096, false);
  uint64_t second_copied_ns = now_ns();
  host_blocks::on_free(second);
  uint64_t second_freed_ns = now_ns();
  EXPECT_FALSE(host_blocks::promote_for_writer(first + 8, first_copied_ns).has_value())
      << "a row already";
  row = host_blocks::promote_for_writer(second + 4095, second_copied_ns);
  ASSERT_TRUE(row.has_value()) << "freed after the writer last looked";
  EXPECT_EQ(row->allocation.allocation.address, second);
  EXPECT_GE(row->free_ns, second_copied_ns);
  EXPECT_LE(row->free_ns, second_freed_ns);
  EXPECT_EQ(host_blocks::registry().find(second + 10, second_copied_ns)->id,
            row->allocation.allocation.alloc_id);

  host_blocks::forget_freed_before(now_ns() + 1);  // the taken ones go too
  EXPECT_FALSE(host_blocks::promote_for_writer(second, second_copied_ns).has_value());
  drained();
}

// Forgetting goes in free order, through the index and then the log, and
// stops at the first block freed after the horizon.
TEST_F(HostBlocksTest, FreedBlocksAreForgottenInFreeOrderIndexedOrNot) {
  enable(false);
  const uint64_t blocks[] = {0x100000c00000, 0x100000c10000, 0x100000c20000, 0x100000c30000};
  uint64_t copied_ns[4];
  uint64_t freed_ns[4];
  for (int i = 0; i < 4; ++i) {
    host_blocks::on_allocate(blocks[i], 8192, false);
    copied_ns[i] = now_ns();
    host_blocks::on_free(blocks[i]);
    freed_ns[i] = now_ns();
    // The first two are indexed (a look finding nothing), the others logged.
    if (i == 1) {
      EXPECT_FALSE(host_blocks::promote_for_writer(blocks[0], 0).has_value());
    }
  }
  host_blocks::forget_freed_before(freed_ns[0] + 1);
  EXPECT_FALSE(host_blocks::promote_for_writer(blocks[0], copied_ns[0]).has_value())
      << "indexed, freed before the horizon";
  host_blocks::forget_freed_before(freed_ns[2] + 1);
  EXPECT_FALSE(host_blocks::promote_for_writer(blocks[1], copied_ns[1]).has_value());
  EXPECT_FALSE(host_blocks::promote_for_writer(blocks[2], copied_ns[2]).has_value())
      << "logged, freed before the horizon";
  EXPECT_TRUE(host_blocks::promote_for_writer(blocks[3], copied_ns[3]).has_value())
      << "freed after it";
  host_blocks::forget_freed_before(now_ns() + 1);
  drained();
}

// The cap counts freed blocks whether logged or indexed, and forgetting
// makes room again. Mapped regions: all in one shard, which may use all of
// the room once the writer has forgotten what other shards held.
TEST_F(HostBlocksTest, FreedBlocksPastTheCapAreCountedNotKept) {
  enable(false);
  host_blocks::forget_freed_before(now_ns() + 1);
  const uint64_t base = 0x200000000000;
  uint64_t not_kept = host_blocks::not_kept_blocks();
  for (uint64_t i = 0; i < host_blocks::kMaxFreedKept; ++i) {
    host_blocks::on_allocate(base + i * 8192, 4096, true);
    ASSERT_TRUE(host_blocks::on_unmap(base + i * 8192, 4096));
    // Half of them indexed.
    if (i == host_blocks::kMaxFreedKept / 2) host_blocks::promote_for_writer(base, 0);
  }
  EXPECT_EQ(host_blocks::not_kept_blocks(), not_kept);
  const uint64_t over = base + uint64_t{host_blocks::kMaxFreedKept} * 8192;
  host_blocks::on_allocate(over, 4096, true);
  uint64_t over_copied_ns = now_ns();
  host_blocks::on_unmap(over, 4096);
  EXPECT_EQ(host_blocks::not_kept_blocks(), not_kept + 1);
  EXPECT_FALSE(host_blocks::promote_for_writer(over, over_copied_ns).has_value()) << "not kept";

  host_blocks::forget_freed_before(now_ns() + 1);
  host_blocks::on_allocate(over, 4096, true);
  over_copied_ns = now_ns();
  host_blocks::on_unmap(over, 4096);
  EXPECT_EQ(host_blocks::not_kept_blocks(), not_kept + 1) << "room again";
  EXPECT_TRUE(host_blocks::promote_for_writer(over, over_copied_ns).has_value());
  host_blocks::forget_freed_before(now_ns() + 1);
  drained();
}

// Every block is a row in `all` mode: once the writer has passed a row's
// free, the registry forgets it too (its history grew with every free).
TEST_F(HostBlocksTest, RowsFreedBeforeTheWriterPassedAreForgotten) {
  enable(true);
  const uint64_t block = 0x100000900000;
  host_blocks::on_allocate(block, 8192, false);
  uint64_t lived_ns = now_ns();
  host_blocks::on_free(block);
  ASSERT_TRUE(host_blocks::registry().find(block, lived_ns).has_value());
  host_blocks::forget_freed_before(now_ns() + 1);
  EXPECT_FALSE(host_blocks::registry().find(block, lived_ns).has_value());
  drained();
}

// In `all` mode the registry alone keeps the rows: a block allocated again
// at a live row's address (its free went by a path we do not see) ends that
// row, and a free of a block that is no row sends nothing.
TEST_F(HostBlocksTest, InAllModeAMissedFreeEndsTheRowAndAnUnknownFreeSendsNothing) {
  enable(true);
  const uint64_t block = 0x100000a00000;
  host_blocks::on_allocate(block, 8192, false);
  host_blocks::on_allocate(block, 16384, false);
  host_blocks::on_free(block + 0x100000);
  std::vector<Record> records = drained();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[1].type, RecordType::Free);
  EXPECT_EQ(records[1].free.alloc_id, records[0].allocation.alloc_id);
  EXPECT_EQ(records[2].allocation.bytes, 16384u);
  host_blocks::on_free(block);
  records = drained();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].free.alloc_id, host_blocks::registry().find(block, records[0].free.ns - 1)->id);
  enable(false);
}

// End to end in the store: a program copies from a buffer and frees it
// before the writer reads the copy; the copy's source is that buffer's row,
// which ends at the free.
TEST_F(HostBlocksTest, TheStoreResolvesACopyFromABufferFreedBeforeItWasRead) {
  enable(false);
  testing::ScratchDir scratch;
  std::string path = scratch / "host-freed.db";
  const uint64_t block = 0x100000900000;
  host_blocks::on_allocate(block, 8192, false);
  Record copy{};
  copy.type = RecordType::Memcpy;
  copy.correlation_id = copy.own_correlation_id = 1;
  copy.memcpy.src = block + 64;
  copy.memcpy.bytes = 64;
  copy.memcpy.kind = CopyKind::HtoD;
  copy.memcpy.api_start_ns = now_ns();
  copy.memcpy.src_device = copy.memcpy.dst_device = -1;
  host_blocks::on_free(block);
  uint64_t after_free_ns = now_ns();
  drained();
  AllocationRegistry cuda;
  store(path, {copy}, cuda);
  Database db(path, Database::Mode::ReadOnly);
  Statement row = db.prepare(
      "SELECT a.bytes, a.kind, a.free_ns, m.src_offset FROM memcpys m"
      " JOIN allocations a ON a.id = m.src_alloc_id");
  ASSERT_TRUE(row.step()) << "the copy's source resolved to a row";
  EXPECT_EQ(row.int64(0), 8192);
  EXPECT_EQ(row.int64(1), static_cast<int64_t>(AllocKind::PageableHost));
  EXPECT_GE(row.int64(2), copy.memcpy.api_start_ns) << "ended at its free";
  EXPECT_LE(row.int64(2), static_cast<int64_t>(after_free_ns));
  EXPECT_EQ(row.int64(3), 64);
}

// A kernel argument pointing into a malloc'd block (a stale entry of a
// metadata struct, a host scalar's address) is an access only where the
// device can touch pageable memory (HMM, ATS): elsewhere it makes no row.
TEST_F(HostBlocksTest, AKernelArgumentMakesAHostRowOnlyWhereKernelsReadPageableMemory) {
  enable(false);
  testing::ScratchDir scratch;
  const uint64_t block = 0x100000b00000;
  host_blocks::on_allocate(block, 8192, false);
  drained();
  auto host_rows_and_words = [&](int pageable_memory_access) {
    std::string path = scratch / ("kernel-" + std::to_string(pageable_memory_access) + ".db");
    AllocationRegistry cuda;
    StringTable strings;
    Record launch = testing::launch_record(3, strings.intern("scale_kernel"), now_ns());
    launch.kernel.device = 0;
    std::vector<Record> records{launch, testing::args_record(3, {{block + 64, 0, 0, 8}})};
    {
      TraceStore store(path, cuda, strings,
                       HostBlockResolution{&host_blocks::registry(), host_blocks::promote_for_writer,
                                           host_blocks::forget_freed_before});
      store.begin();
      DeviceInfo device;
      device.pageable_memory_access = pageable_memory_access;
      store.write_device(device);
      store.write(records.data(), records.size());
      store.finish();
      store.commit();
    }
    Database db(path, Database::Mode::ReadOnly);
    Statement rows = db.prepare("SELECT (SELECT count(*) FROM allocations),"
                                " (SELECT count(*) FROM kernel_arg_words),"
                                " (SELECT pageable_memory_access FROM devices)");
    EXPECT_TRUE(rows.step());
    return std::vector<int64_t>{rows.int64(0), rows.int64(1), rows.int64(2)};
  };
  EXPECT_EQ(host_rows_and_words(0), (std::vector<int64_t>{0, 0, 0}))
      << "the device cannot touch pageable memory: no access, no row";
  EXPECT_EQ(host_rows_and_words(1), (std::vector<int64_t>{1, 1, 1}))
      << "it can: the block is touched, a row, and the word points into it";
  host_blocks::on_free(block);
  drained();
}

// cudaHostRegister on a malloc'd block: the registered row (CUDA's view,
// pinned) and the block's own pageable row, both covering the same bytes.
TEST_F(HostBlocksTest, RegisteringABlockMakesItARowToo) {
  enable(false);
  testing::ScratchDir scratch;
  std::string path = scratch / "host-registered.db";
  const uint64_t block = 0x100000a00000;
  host_blocks::on_allocate(block, 8192, false);
  AllocationRegistry cuda(&allocations());
  Record registered{};
  registered.type = RecordType::Allocation;
  registered.allocation.address = block;
  registered.allocation.bytes = 8192;
  registered.allocation.ns = now_ns();
  registered.allocation.device = -1;
  registered.allocation.kind = AllocKind::RegisteredHost;
  registered.allocation.numa_node_plus_one = 1;  // read in the call: node 0
  registered.allocation.alloc_id =
      cuda.add(block, 8192, AllocKind::RegisteredHost, -1, registered.allocation.ns);
  drained();
  store(path, {registered}, cuda);
  Database db(path, Database::Mode::ReadOnly);
  Statement rows = db.prepare("SELECT kind, address, numa_node FROM allocations ORDER BY kind");
  ASSERT_TRUE(rows.step());
  EXPECT_EQ(rows.int64(0), static_cast<int64_t>(AllocKind::RegisteredHost));
  EXPECT_EQ(rows.int64(2), 0) << "the node read in the registering call";
  ASSERT_TRUE(rows.step()) << "the block registered became a row too";
  EXPECT_EQ(rows.int64(0), static_cast<int64_t>(AllocKind::PageableHost));
  EXPECT_EQ(rows.int64(1), static_cast<int64_t>(block));
  EXPECT_FALSE(rows.step());
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

// Runs body(0) and body(1) on two threads at once.
template <typename Body>
void run_both(Body body) {
  std::thread first(body, 0);
  std::thread second(body, 1);
  first.join();
  second.join();
}

// Two threads, each allocating in its own 64 MiB region (its own shards),
// then freeing the other's blocks: in `all` mode every block is one row
// ended by one free, and the rows are counted though both threads are gone.
TEST_F(HostBlocksTest, RowsFreedByAnotherThreadEndOnceAndAreCounted) {
  enable(true);
  drained();
  uint64_t stored = host_blocks::stored_blocks();
  constexpr uint64_t kBlocks = 1000;
  const uint64_t regions[2] = {0x300000000000, 0x300004000000};
  run_both([&](int t) {
    for (uint64_t i = 0; i < kBlocks; ++i) host_blocks::on_allocate(regions[t] + i * 8192, 8192, false);
  });
  run_both([&](int t) {
    for (uint64_t i = 0; i < kBlocks; ++i) host_blocks::on_free(regions[1 - t] + i * 8192);
  });
  std::map<uint64_t, uint64_t> address_of;  // row id -> address
  std::multiset<uint64_t> freed;
  for (const Record& r : drained()) {
    if (r.type == RecordType::Allocation) address_of[r.allocation.alloc_id] = r.allocation.address;
    if (r.type == RecordType::Free) freed.insert(r.free.alloc_id);
  }
  ASSERT_EQ(address_of.size(), 2 * kBlocks) << "one row, with its own id, per block";
  EXPECT_EQ(freed.size(), 2 * kBlocks);
  for (const auto& [id, address] : address_of) EXPECT_EQ(freed.count(id), 1u) << address;
  EXPECT_EQ(host_blocks::stored_blocks(), stored + 2 * kBlocks);
  host_blocks::forget_freed_before(now_ns() + 1);
  enable(false);
}

// The same in the default mode: every block, freed by the other thread, is
// found with its own lifetime by a touch from while it lived, and none
// stays live.
TEST_F(HostBlocksTest, BlocksFreedByAnotherThreadKeepTheirLifetimes) {
  enable(false);
  host_blocks::forget_freed_before(now_ns() + 1);
  uint64_t not_kept = host_blocks::not_kept_blocks();
  constexpr uint64_t kBlocks = 1000;
  const uint64_t regions[2] = {0x300100000000, 0x300104000000};
  run_both([&](int t) {
    for (uint64_t i = 0; i < kBlocks; ++i) host_blocks::on_allocate(regions[t] + i * 8192, 4096, false);
  });
  uint64_t lived_ns = now_ns();
  run_both([&](int t) {
    for (uint64_t i = 0; i < kBlocks; ++i) host_blocks::on_free(regions[1 - t] + i * 8192);
  });
  uint64_t freed_ns = now_ns();
  EXPECT_EQ(host_blocks::not_kept_blocks(), not_kept);
  for (uint64_t address : regions) {
    for (uint64_t i = 0; i < kBlocks; ++i) {
      uint64_t block = address + i * 8192;
      EXPECT_FALSE(host_blocks::promote_for_writer(block, freed_ns).has_value()) << "none is live";
      std::optional<PromotedBlock> row = host_blocks::promote_for_writer(block + 4095, lived_ns);
      ASSERT_TRUE(row.has_value()) << block;
      EXPECT_EQ(row->allocation.allocation.address, block);
      EXPECT_GT(row->free_ns, lived_ns);
      EXPECT_LE(row->free_ns, freed_ns);
    }
  }
  host_blocks::forget_freed_before(now_ns() + 1);
  drained();
}

// A free can reach the writer before its allocation's row (another thread's
// buffer drained later); the row still ends up freed.
TEST(TraceStoreHost, FreeBeforeItsAllocationRowIsKept) {
  testing::ScratchDir scratch;
  std::string path = scratch / "host-free.db";
  AllocationRegistry registry;
  AllocationRegistry host_registry;
  {
    StringTable strings;
    TraceStore store(path, registry, strings, HostBlockResolution{&host_registry, nullptr, nullptr});
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
}

}  // namespace
}  // namespace apptracer
