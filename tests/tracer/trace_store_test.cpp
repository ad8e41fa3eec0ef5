// The record -> row logic of the tracer, without CUPTI: records are made by
// hand, written through TraceStore, and the rows read back.
#include "store/trace_store.h"

#include <cupti_driver_cbid.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "buffer/allocation_registry.h"
#include "buffer/string_table.h"
#include "launch_records.h"
#include "store_fixture.h"

namespace apptracer {
namespace {

class TraceStoreTest : public StoreFixture {
 protected:
  TraceStoreTest() : StoreFixture("store") {}

  Record allocation(uint64_t address, uint64_t bytes, AllocKind kind, uint64_t ns) {
    Record r{};
    r.type = RecordType::Allocation;
    r.allocation.alloc_id = registry_.add(address, bytes, kind, 0, ns);
    r.allocation.address = address;
    r.allocation.bytes = bytes;
    r.allocation.ns = ns;
    r.allocation.device = 0;
    r.allocation.kind = kind;
    return r;
  }
  Record copy(uint32_t correlation, uint64_t src, uint64_t dst, uint64_t bytes, CopyKind kind,
              uint64_t ns) {
    Record r{};
    r.type = RecordType::Memcpy;
    r.correlation_id = r.own_correlation_id = correlation;
    r.memcpy.src = src;
    r.memcpy.dst = dst;
    r.memcpy.bytes = bytes;
    r.memcpy.kind = kind;
    r.memcpy.api_start_ns = ns;
    r.memcpy.src_device = r.memcpy.dst_device = -1;
    r.memcpy.stream = -1;  // as copy_record() leaves it: activity says
    return r;
  }
  Record gpu_copy(uint32_t correlation, uint64_t start, uint64_t end) {
    Record r{};
    r.type = RecordType::GpuMemcpy;
    r.correlation_id = correlation;
    r.gpu_memcpy.start_ns = start;
    r.gpu_memcpy.end_ns = end;
    r.gpu_memcpy.bytes = 64;
    r.gpu_memcpy.stream = 7;
    r.gpu_memcpy.kind = CopyKind::HtoD;
    r.gpu_memcpy.src_memory = MemoryKind::Pageable;
    r.gpu_memcpy.dst_memory = MemoryKind::Device;
    r.gpu_memcpy.src_device = r.gpu_memcpy.dst_device = -1;
    return r;
  }
  // One writer pass.
  void write(std::initializer_list<Record> records) {
    std::vector<Record> all(records);
    store_->begin();
    store_->write(all.data(), all.size());
    store_->end_pass(UINT64_MAX);
    for (const auto& [id, text] : strings_.take_new()) store_->write_string(id, text);
    store_->commit();
  }
  // One pass, then as many empty ones as rows wait for their GPU activity.
  void write_and_settle(std::initializer_list<Record> records) {
    write(records);
    for (int pass = 0; pass < StoreOptions{}.activity.hold_passes; ++pass) write({});
  }
  Database read() { return Database(path_, Database::Mode::ReadOnly); }
  int64_t scalar(const std::string& sql) {
    Database db = read();
    Statement q = db.prepare(sql);
    EXPECT_TRUE(q.step()) << sql;
    return q.int64(0);
  }

};

TEST_F(TraceStoreTest, CopyEndpointsResolveToAllocationsIncludingInteriorPointers) {
  write_and_settle({allocation(0x1000, 0x100, AllocKind::Device, 10),
                    copy(5, 0x9000, 0x1040, 64, CopyKind::HtoD, 20)});
  Database db = read();
  Statement q = db.prepare(
      "SELECT dst_alloc_id, dst_offset, dst_memory, src_alloc_id, src_memory FROM memcpys");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 1);
  EXPECT_EQ(q.int64(1), 0x40);
  EXPECT_EQ(q.int64(2), static_cast<int>(MemoryKind::Device));
  EXPECT_TRUE(q.is_null(3)) << "unknown host memory stays unresolved";
  EXPECT_EQ(q.int64(4), static_cast<int>(MemoryKind::Pageable));
}

// What the call's entry saw of a copy's destination pages is kept for
// pageable destinations, where the driver's staging copy pays first touches;
// pinned memory has all its pages from its allocation.
TEST_F(TraceStoreTest, ACopyIntoPageableMemoryKeepsHowManyOfItsPagesWereUntouched) {
  Record pageable = copy(1, 0x1000, 0x9000, 4 << 20, CopyKind::DtoH, 20);
  pageable.memcpy.dst_pages_mapped = 16;
  pageable.memcpy.dst_pages_untouched = 12;
  Record pinned = copy(2, 0x1000, 0x20000, 4 << 20, CopyKind::DtoH, 30);
  pinned.memcpy.dst_pages_mapped = 16;
  Record small = copy(3, 0x1000, 0x9000, 64, CopyKind::DtoH, 40);
  write_and_settle({allocation(0x1000, 0x100, AllocKind::Device, 10),
                    allocation(0x20000, 8 << 20, AllocKind::PinnedHost, 10), pageable, pinned, small});
  Database db = read();
  Statement q = db.prepare("SELECT dst_sampled_pages, dst_untouched_pages FROM memcpys ORDER BY call_correlation_id");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 16);
  EXPECT_EQ(q.int64(1), 12);
  ASSERT_TRUE(q.step());
  EXPECT_TRUE(q.is_null(0)) << "pinned memory";
  ASSERT_TRUE(q.step());
  EXPECT_TRUE(q.is_null(0) && q.is_null(1)) << "not probed";
}

TEST_F(TraceStoreTest, ResolutionFollowsLifetimesWhenAnAddressIsReused) {
  Record first = allocation(0x1000, 0x100, AllocKind::Device, 10);
  registry_.remove(0x1000, 30);
  Record second = allocation(0x1000, 0x100, AllocKind::Managed, 40);
  write_and_settle({first, second, copy(1, 0x9000, 0x1000, 8, CopyKind::HtoD, 20),
                    copy(2, 0x9000, 0x1000, 8, CopyKind::Unknown, 50)});
  Database db = read();
  Statement q = db.prepare("SELECT dst_alloc_id, kind FROM memcpys ORDER BY id");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), first.allocation.alloc_id);
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), second.allocation.alloc_id);
  EXPECT_EQ(q.int64(1), static_cast<int>(CopyKind::Unknown))
      << "into managed memory: only the GPU activity knows the direction";
}

TEST_F(TraceStoreTest, ActivityJoinsItsCopyInEitherOrder) {
  write({copy(1, 0x9000, 0xa000, 64, CopyKind::HtoD, 10), gpu_copy(1, 100, 200)});
  write({gpu_copy(2, 300, 400)});
  write({copy(2, 0x9000, 0xa000, 64, CopyKind::HtoD, 20)});
  EXPECT_EQ(scalar("SELECT count(*) FROM memcpys"), 2);
  EXPECT_EQ(scalar("SELECT gpu_start_ns FROM memcpys WHERE call_correlation_id = 1"), 100);
  EXPECT_EQ(scalar("SELECT gpu_end_ns FROM memcpys WHERE call_correlation_id = 2"), 400);
  EXPECT_EQ(scalar("SELECT stream FROM memcpys WHERE call_correlation_id = 2"), 7);
}

TEST_F(TraceStoreTest, ACopyStagedAsSeveralTransfersStaysOneRowSpanningThem) {
  Record peer = copy(4, 0x9000, 0xa000, 64, CopyKind::PtoP, 10);
  Record first = gpu_copy(4, 100, 200);
  first.gpu_memcpy.kind = CopyKind::DtoH;
  Record second = gpu_copy(4, 250, 300);
  write({peer, first, second});
  write({gpu_copy(5, 400, 500), gpu_copy(5, 510, 520)});
  write({copy(5, 0x9000, 0xa000, 64, CopyKind::Unknown, 20)});
  EXPECT_EQ(scalar("SELECT count(*) FROM memcpys"), 2);
  EXPECT_EQ(scalar("SELECT gpu_start_ns FROM memcpys WHERE call_correlation_id = 4"), 100);
  EXPECT_EQ(scalar("SELECT gpu_end_ns FROM memcpys WHERE call_correlation_id = 4"), 300);
  EXPECT_EQ(scalar("SELECT kind FROM memcpys WHERE call_correlation_id = 4"),
            static_cast<int>(CopyKind::PtoP)) << "the call's direction stands";
  EXPECT_EQ(scalar("SELECT gpu_end_ns FROM memcpys WHERE call_correlation_id = 5"), 520)
      << "transfers held before their call arrived are all claimed";
  EXPECT_EQ(scalar("SELECT kind FROM memcpys WHERE call_correlation_id = 5"),
            static_cast<int>(CopyKind::HtoD)) << "a default-direction call takes the GPU's";
}

TEST_F(TraceStoreTest, ATransferComingPassesAfterItsCopyWasStoredExtendsTheStoredRow) {
  write_and_settle({allocation(0x1000, 0x100, AllocKind::Device, 10),
                    copy(6, 0x9000, 0x1040, 64, CopyKind::HtoD, 20), gpu_copy(6, 100, 200)});
  EXPECT_EQ(scalar("SELECT gpu_end_ns FROM memcpys"), 200);
  write({gpu_copy(6, 250, 300)});
  EXPECT_EQ(scalar("SELECT count(*) FROM memcpys"), 1) << "the same row, read back and stored again";
  EXPECT_EQ(scalar("SELECT gpu_start_ns FROM memcpys"), 100);
  EXPECT_EQ(scalar("SELECT gpu_end_ns FROM memcpys"), 300);
  EXPECT_EQ(scalar("SELECT dst_alloc_id FROM memcpys"), 1) << "what was resolved stays";
  EXPECT_EQ(scalar("SELECT dst_offset FROM memcpys"), 0x40);
  EXPECT_EQ(scalar("SELECT bytes FROM memcpys"), 64);
  EXPECT_EQ(scalar("SELECT api_start_ns FROM memcpys"), 20);
}

TEST_F(TraceStoreTest, ActivityWithoutAnApiRowBecomesARowOfItsOwn) {
  Record kernel{};
  kernel.type = RecordType::GpuKernel;
  kernel.correlation_id = 9;
  kernel.gpu_kernel.start_ns = 5;
  kernel.gpu_kernel.end_ns = 6;
  kernel.gpu_kernel.graph_node_id = 77;
  kernel.gpu_kernel.name_id = strings_.intern("_Z6kernelv");
  kernel.gpu_kernel.device = 0;
  write({kernel});
  EXPECT_EQ(scalar("SELECT count(*) FROM kernels"), 0) << "held while its API row may still come";
  write({});
  write({});
  EXPECT_EQ(scalar("SELECT count(*) FROM kernels WHERE launch_kind = 4 AND graph_node_id = 77"), 1);
  EXPECT_EQ(scalar("SELECT count(*) FROM kernels k JOIN strings s ON s.id = k.demangled_id "
                   "WHERE s.text = 'kernel()'"),
            1);
}

TEST_F(TraceStoreTest, KernelArgumentWordsResolveWithAccessFromTheSignature) {
  Record y = allocation(0x10000, 0x1000, AllocKind::Device, 1);
  Record x = allocation(0x20000, 0x1000, AllocKind::Device, 2);
  // axpy(float*, float const*, unsigned long, int)
  Record launch = testing::launch_record(42, strings_.intern("_Z4axpyPfPKfmi"), 10);
  launch.kernel.arg_words = 4;
  Record args = testing::args_record(42, {
                                             {0x10010, 0, 0, 8},   // y + 16: interior, read-write
                                             {0x20000, 8, 1, 8},   // x: const, read
                                             {0x20008, 16, 2, 8},  // an unsigned long that looks like x
                                             {0x30000, 24, UINT16_MAX, 0},  // in no allocation
                                         });
  write_and_settle({y, x, launch, args});
  Database db = read();
  Statement q = db.prepare(
      "SELECT param_index, offset, alloc_id, alloc_offset, access, access_source FROM kernel_args"
      " ORDER BY offset");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(2), y.allocation.alloc_id);
  EXPECT_EQ(q.int64(3), 16);
  EXPECT_EQ(q.int64(4), static_cast<int>(AccessKind::ReadWrite));
  EXPECT_EQ(q.int64(5), static_cast<int>(AccessSource::Assumed));
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(2), x.allocation.alloc_id);
  EXPECT_EQ(q.int64(4), static_cast<int>(AccessKind::Read));
  EXPECT_EQ(q.int64(5), static_cast<int>(AccessSource::ConstSignature));
  EXPECT_FALSE(q.step()) << "the unsigned long and the word in no allocation are dropped";
  // The launch's arguments were read: it has a set, of the two words.
  EXPECT_EQ(scalar("SELECT s.words FROM kernels k JOIN kernel_arg_sets s ON s.id = k.arg_set_id"), 2);
}

TEST_F(TraceStoreTest, FreesEndAllocations) {
  Record a = allocation(0x2000, 0x10, AllocKind::PinnedHost, 1);
  std::optional<AllocationInfo> freed = registry_.remove(0x2000, 9);
  ASSERT_TRUE(freed.has_value());
  Record f{};
  f.type = RecordType::Free;
  f.free.alloc_id = freed->id;
  f.free.ns = 9;
  write({a, f});
  EXPECT_EQ(scalar("SELECT free_ns FROM allocations"), 9);
}

// A free fills in its row whether the row was stored in an earlier pass,
// waits in this one, or comes in a later pass than the free itself.
TEST_F(TraceStoreTest, FreesFindTheirRowInAnyPassOrder) {
  auto free_of = [&](uint64_t address, uint64_t ns) {
    Record f{};
    f.type = RecordType::Free;
    f.free.alloc_id = registry_.remove(address, ns)->id;
    f.free.ns = ns;
    f.own_correlation_id = static_cast<uint32_t>(ns);
    return f;
  };
  Record stored_before = allocation(0x1000, 0x10, AllocKind::Device, 1);
  write({stored_before});
  Record same_pass = allocation(0x2000, 0x10, AllocKind::Device, 2);
  Record free_first = allocation(0x3000, 0x10, AllocKind::Device, 3);
  Record never_freed = allocation(0x4000, 0x10, AllocKind::Device, 4);
  write({free_of(0x1000, 10), same_pass, free_of(0x2000, 11), free_of(0x3000, 12), never_freed});
  write({free_first});
  Database db = read();
  Statement q = db.prepare("SELECT address, free_ns, free_correlation_id FROM allocations ORDER BY address");
  for (auto [address, free_ns] : {std::pair<int64_t, int64_t>{0x1000, 10}, {0x2000, 11}, {0x3000, 12}}) {
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.int64(0), address);
    EXPECT_EQ(q.int64(1), free_ns) << std::hex << address;
    EXPECT_EQ(q.int64(2), free_ns) << std::hex << address;
  }
  ASSERT_TRUE(q.step());
  EXPECT_TRUE(q.is_null(1)) << "the block never freed";
  EXPECT_FALSE(q.step());
}

Record advice(uint32_t correlation, MemAdvice kind, uint64_t address, uint64_t bytes,
              MemLocationType location, int32_t location_id, int64_t stream) {
  Record r{};
  r.type = RecordType::MemAdvice;
  r.correlation_id = r.own_correlation_id = correlation;
  r.tid = 77;
  r.mem_advice = {address, bytes, 20, stream, location_id, kind, location};
  return r;
}

TEST_F(TraceStoreTest, MemAdviceRowsResolveAndKeepTheirLocation) {
  Record managed = allocation(0x100000, 0x10000, AllocKind::Managed, 10);
  write({managed,
         advice(1, MemAdvice::SetPreferredLocation, 0x100000, 0x10000, MemLocationType::Host, -1, -1),
         advice(2, MemAdvice::SetAccessedBy, 0x108000, 0x1000, MemLocationType::Device, 0, -1),
         advice(3, MemAdvice::AttachSingle, 0x100000, 0, MemLocationType::Invalid, -1, 13)});
  Database db = read();
  Statement q = db.prepare(
      "SELECT call_correlation_id, advice, bytes, alloc_id, alloc_offset, location_type,"
      " location_id, stream, tid, ns FROM mem_advice ORDER BY call_correlation_id");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(1), static_cast<int>(MemAdvice::SetPreferredLocation));
  EXPECT_EQ(q.int64(3), managed.allocation.alloc_id);
  EXPECT_EQ(q.int64(5), static_cast<int>(MemLocationType::Host));
  EXPECT_TRUE(q.is_null(6)) << "the host location takes no id";
  EXPECT_TRUE(q.is_null(7));
  EXPECT_EQ(q.int64(8), 77);
  EXPECT_EQ(q.int64(9), 20);
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(4), 0x8000);
  EXPECT_EQ(q.int64(5), static_cast<int>(MemLocationType::Device));
  EXPECT_EQ(q.int64(6), 0);
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(1), static_cast<int>(MemAdvice::AttachSingle));
  EXPECT_EQ(q.int64(2), 0) << "an attachment of the whole allocation";
  EXPECT_TRUE(q.is_null(5)) << "an attachment has no location";
  EXPECT_EQ(q.int64(7), 13);
}

TEST_F(TraceStoreTest, StreamRowsKeepTheirKindAndCreatingCall) {
  Record created{};
  created.type = RecordType::Stream;
  created.correlation_id = 4;
  created.stream = {13, 1, 0, StreamKind::Blocking};
  Record legacy{};
  legacy.type = RecordType::Stream;
  legacy.stream = {7, 1, 0, StreamKind::Legacy};
  write({created, legacy});
  Database db = read();
  Statement q = db.prepare("SELECT stream, context_id, kind, call_correlation_id FROM streams ORDER BY stream");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 7);
  EXPECT_EQ(q.int64(2), static_cast<int>(StreamKind::Legacy));
  EXPECT_TRUE(q.is_null(3)) << "made with its context, by no call";
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 13);
  EXPECT_EQ(q.int64(1), 1);
  EXPECT_EQ(q.int64(2), static_cast<int>(StreamKind::Blocking));
  EXPECT_EQ(q.int64(3), 4);
  EXPECT_FALSE(q.step());
}

Record um_event(UmCounterKind kind, uint64_t address, uint64_t value, uint32_t flags,
                uint64_t start, uint64_t end) {
  Record r{};
  r.type = RecordType::UmEvent;
  r.um_event = {start, end, address, value, -1, 0, flags, kind};
  return r;
}

TEST_F(TraceStoreTest, UmEventsResolveToTheManagedAllocationByKind) {
  Record managed = allocation(0x100000, 0x200000, AllocKind::Managed, 10);
  write({managed, um_event(UmCounterKind::BytesHtoD, 0x110000, 0x10000, 2, 100, 150),
         um_event(UmCounterKind::GpuPageFault, 0x120000, 3, 1, 90, 95),
         um_event(UmCounterKind::Thrashing, 0x100000, 0x1000, 8, 200, 0),
         um_event(UmCounterKind::CpuPageFault, 0x900000, 0x401234, 0, 300, 0)});
  Database db = read();
  Statement q = db.prepare(
      "SELECT counter_kind, bytes, alloc_id, alloc_offset, src_device, dst_device, end_ns, value,"
      " cause, flags FROM um_events ORDER BY start_ns");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), static_cast<int>(UmCounterKind::GpuPageFault));
  EXPECT_TRUE(q.is_null(1)) << "a fault's value counts fault groups, not bytes";
  EXPECT_EQ(q.int64(2), managed.allocation.alloc_id);
  EXPECT_EQ(q.int64(3), 0x20000);
  EXPECT_EQ(q.int64(7), 3);
  EXPECT_EQ(q.int64(8), 1) << "access type read";
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(1), 0x10000);
  EXPECT_EQ(q.int64(2), managed.allocation.alloc_id);
  EXPECT_TRUE(q.is_null(4)) << "the host side";
  EXPECT_EQ(q.int64(5), 0);
  EXPECT_EQ(q.int64(6), 150);
  EXPECT_EQ(q.int64(8), 2) << "migration cause coherence";
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(1), 0x1000);
  EXPECT_TRUE(q.is_null(6)) << "no end";
  EXPECT_TRUE(q.is_null(8)) << "thrashing's flags are no cause";
  EXPECT_EQ(q.int64(9), 8);
  ASSERT_TRUE(q.step());
  EXPECT_TRUE(q.is_null(2)) << "a __managed__ variable is in no allocation";
  EXPECT_EQ(q.int64(7), 0x401234);
}

TEST_F(TraceStoreTest, PrefetchRowsResolveAndWaitForNoActivity) {
  Record managed = allocation(0x100000, 0x200000, AllocKind::Managed, 10);
  Record prefetch = copy(6, 0x140000, 0x140000, 0x40000, CopyKind::Prefetch, 20);
  prefetch.memcpy.dst_device = 0;
  prefetch.memcpy.is_async = true;
  write({managed, prefetch});
  Database db = read();
  Statement q = db.prepare(
      "SELECT kind, src_alloc_id, dst_alloc_id, dst_offset, dst_memory, dst_device, is_async"
      " FROM memcpys");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), static_cast<int>(CopyKind::Prefetch));
  EXPECT_EQ(q.int64(1), managed.allocation.alloc_id);
  EXPECT_EQ(q.int64(2), managed.allocation.alloc_id);
  EXPECT_EQ(q.int64(3), 0x40000);
  EXPECT_EQ(q.int64(4), static_cast<int>(MemoryKind::Managed));
  EXPECT_EQ(q.int64(5), 0);
  EXPECT_EQ(q.int64(6), 1);
  // Copy activity under the same correlation id is not the prefetch's.
  write_and_settle({gpu_copy(6, 100, 200)});
  EXPECT_EQ(scalar("SELECT count(*) FROM memcpys WHERE kind = 6 AND gpu_start_ns IS NULL"), 1);
  EXPECT_EQ(scalar("SELECT count(*) FROM memcpys WHERE gpu_start_ns = 100"), 1);
}

TEST_F(TraceStoreTest, FinishReportsRowCountsAndHeldActivity) {
  write({gpu_copy(3, 1, 2)});
  store_->begin();
  auto counts = store_->finish();
  store_->commit();
  int seen = 0;
  for (const auto& [table, rows] : counts) {
    if (table == "memcpys") {
      EXPECT_EQ(rows, 1);
      ++seen;
    }
    if (table == "um_events" || table == "mem_advice") {
      EXPECT_EQ(rows, 0);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 3);
}

}  // namespace
}  // namespace apptracer

namespace apptracer {
namespace {

// The activity join and argument sets (store/activity_join.h, kernel_arg_sets.h).
class StoreJoinTest : public TraceStoreTest {
 protected:
  Record launch(uint32_t correlation, uint64_t ns) {
    return testing::launch_record(correlation, strings_.intern("_Z4axpyPfPKfmi"), ns);
  }
  Record args(uint32_t correlation, std::initializer_list<KernelArgWord> words) {
    return testing::args_record(correlation, words);
  }
  Record gpu_kernel(uint32_t correlation, uint64_t start) {
    Record r{};
    r.type = RecordType::GpuKernel;
    r.correlation_id = correlation;
    r.gpu_kernel.start_ns = start;
    r.gpu_kernel.end_ns = start + 10;
    r.gpu_kernel.stream = 3;
    r.gpu_kernel.device = 0;
    return r;
  }
};

TEST_F(StoreJoinTest, ARowWaitsForItsActivityAndIsWrittenOnceComplete) {
  Record y = allocation(0x10000, 0x1000, AllocKind::Device, 1);
  write({y, launch(7, 10), args(7, {{0x10000, 0, 0, 8}})});
  EXPECT_EQ(scalar("SELECT count(*) FROM kernels"), 0) << "waiting for its GPU times";
  write({gpu_kernel(7, 100)});
  EXPECT_EQ(scalar("SELECT gpu_start_ns FROM kernels"), 100);
  EXPECT_EQ(scalar("SELECT count(*) FROM kernel_args WHERE alloc_id IS NOT NULL"), 1);
}

TEST_F(StoreJoinTest, ActivityAfterTheRowWasStoredWithoutItStillFillsIt) {
  write_and_settle({launch(8, 10), args(8, {})});
  EXPECT_EQ(scalar("SELECT count(*) FROM kernels WHERE gpu_start_ns IS NULL"), 1);
  write({gpu_kernel(8, 200)});
  EXPECT_EQ(scalar("SELECT count(*) FROM kernels"), 1) << "the same row, stored again";
  EXPECT_EQ(scalar("SELECT gpu_start_ns FROM kernels"), 200);
  EXPECT_EQ(scalar("SELECT arg_set_id IS NOT NULL FROM kernels"), 1);
  EXPECT_EQ(scalar("SELECT api_start_ns FROM kernels"), 10) << "read back whole";
  EXPECT_EQ(scalar("SELECT name_id IS NOT NULL AND demangled_id IS NOT NULL FROM kernels"), 1);
}

// The writer passes whenever a buffer fills, every few milliseconds in a
// training loop, while the GPU runs up to a step behind: counted in passes
// alone, rows were stored before their activity came and stored again.
TEST_F(StoreJoinTest, ARowWaitsItsHoldsTimeHoweverOftenTheWriterPasses) {
  store_.reset();
  StoreOptions options;
  options.activity.hold_ns = 1'000'000;
  store_ = std::make_unique<TraceStore>(path_ + ".held", registry_, strings_,
                                        HostBlockResolution{}, options);
  auto pass_at = [&](uint64_t ns, std::vector<Record> records) {
    store_->begin();
    store_->write(records.data(), records.size());
    store_->end_pass(ns);
    store_->commit();
  };
  Database db(path_ + ".held", Database::Mode::ReadOnly);
  auto count = [&](const char* sql) {
    Statement q = db.prepare(sql);
    EXPECT_TRUE(q.step());
    return q.int64(0);
  };
  pass_at(1'000, {launch(11, 10), args(11, {})});
  for (uint64_t ns = 2'000; ns < 1'000'000; ns += 100'000) pass_at(ns, {});
  EXPECT_EQ(count("SELECT count(*) FROM kernels"), 0) << "many passes, but not a millisecond";
  pass_at(1'001'000, {gpu_kernel(11, 500)});
  EXPECT_EQ(count("SELECT count(*) FROM kernels WHERE gpu_start_ns = 500"), 1) << "stored once";

  pass_at(1'002'000, {launch(12, 20), args(12, {})});
  pass_at(1'003'000, {});
  pass_at(1'004'000, {});
  pass_at(1'005'000, {});
  EXPECT_EQ(count("SELECT count(*) FROM kernels WHERE call_correlation_id = 12"), 0)
      << "three passes, a millisecond not yet";
  pass_at(2'001'000, {});
  EXPECT_EQ(count("SELECT count(*) FROM kernels WHERE gpu_start_ns IS NULL"), 1)
      << "a millisecond since the pass before it came: stored without its activity";
  pass_at(2'002'000, {gpu_kernel(12, 900)});
  store_->begin();
  store_->finish();
  store_->commit();
  EXPECT_EQ(count("SELECT count(*) FROM kernels WHERE gpu_start_ns = 900"), 1);
  Statement again = db.prepare("SELECT value FROM meta WHERE key = 'rows_stored_again'");
  ASSERT_TRUE(again.step());
  EXPECT_EQ(again.text(0), "1") << "only the row whose activity came after its hold";
}

TEST_F(StoreJoinTest, ArgumentsArrivingAfterTheActivityCompleteTheRow) {
  write({launch(9, 10), gpu_kernel(9, 300)});
  EXPECT_EQ(scalar("SELECT count(*) FROM kernels"), 0) << "its arguments are still to come";
  write({args(9, {})});
  EXPECT_EQ(scalar("SELECT count(*) FROM kernels WHERE gpu_start_ns = 300"), 1);
  EXPECT_EQ(scalar("SELECT words FROM kernel_arg_sets"), 0) << "read, and no pointers";
}

TEST_F(StoreJoinTest, LaunchesWithTheSameArgumentsShareOneSet) {
  Record x = allocation(0x20000, 0x1000, AllocKind::Device, 1);
  write({x});
  for (uint32_t c = 20; c < 30; ++c) {
    write({launch(c, 10 + c), args(c, {{0x20000, 0, 0, 8}, {0x20010, 8, 1, 8}}), gpu_kernel(c, 100 + c)});
  }
  write({launch(40, 50), args(40, {{0x20020, 0, 0, 8}}), gpu_kernel(40, 140)});
  EXPECT_EQ(scalar("SELECT count(*) FROM kernels"), 11);
  EXPECT_EQ(scalar("SELECT count(*) FROM kernel_arg_sets"), 2);
  EXPECT_EQ(scalar("SELECT count(*) FROM kernel_arg_words"), 3);
  EXPECT_EQ(scalar("SELECT count(*) FROM kernel_args"), 21) << "every launch still has its words";
}

TEST_F(StoreJoinTest, RowsStoredTogetherKeepTheOrderOfTheirCalls) {
  Record a = copy(50, 0x9000, 0xa000, 8, CopyKind::HtoD, 10);
  Record b = copy(51, 0x9000, 0xa000, 8, CopyKind::HtoD, 20);
  Record c = copy(52, 0x9000, 0xa000, 8, CopyKind::HtoD, 30);
  write_and_settle({a, b, c});
  Database db = read();
  Statement q = db.prepare("SELECT call_correlation_id FROM memcpys ORDER BY id");
  for (int64_t expected : {50, 51, 52}) {
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.int64(0), expected);
  }
}

}  // namespace
}  // namespace apptracer

namespace apptracer {
namespace {

// --exact records -> exact_launches and exact_accesses (store/exact_rows.h).
class ExactRowsTest : public StoreJoinTest {
 protected:
  Record exact_launch(uint32_t correlation, uint64_t index, uint64_t ns, uint32_t intervals) {
    Record r{};
    r.type = RecordType::ExactLaunch;
    r.correlation_id = correlation;
    r.exact_launch.launch_index = index;
    r.exact_launch.api_start_ns = ns;
    r.exact_launch.name_id = strings_.intern("_Z4axpyPfPKfmi");
    r.exact_launch.pages = 3;
    r.exact_launch.intervals = intervals;
    r.exact_launch.device = 0;
    r.exact_launch.graph_position = -1;
    r.exact_launch.incomplete = ExactGap::None;
    return r;
  }
  struct Range {
    uint64_t lo, hi;
    AccessKind access;
  };
  Record exact_intervals(uint64_t index, std::initializer_list<Range> ranges) {
    Record r{};
    r.type = RecordType::ExactIntervals;
    r.exact_intervals.launch_index = index;
    for (const Range& range : ranges) {
      int i = r.exact_intervals.count++;
      r.exact_intervals.lo[i] = range.lo;
      r.exact_intervals.hi[i] = range.hi;
      r.exact_intervals.access[i] = range.access;
    }
    return r;
  }
  void finish() {
    store_->begin();
    store_->finish();
    store_->commit();
  }
  // Every exact_accesses row: "alloc_id offset lo-hi access", by address.
  std::vector<std::string> access_rows() {
    std::vector<std::string> out;
    Database db = read();
    Statement rows = db.prepare(
        "SELECT coalesce(alloc_id, '-'), coalesce(alloc_offset, '-'), printf('%x-%x', lo, hi), "
        "access FROM exact_accesses ORDER BY lo");
    while (rows.step()) {
      out.push_back(rows.text(0) + " " + rows.text(1) + " " + rows.text(2) + " " +
                    std::string(to_string(static_cast<AccessKind>(rows.int64(3)))));
    }
    return out;
  }
};

TEST_F(ExactRowsTest, RangesSplitAtAllocationBoundsAndLaunchesJoinTheirKernel) {
  Record a = allocation(0x10000, 0x1000, AllocKind::Device, 1);
  Record b = allocation(0x20000, 0x1000, AllocKind::Device, 2);
  write({a, b, launch(7, 10), gpu_kernel(7, 100)});
  // The ranges come in two records, the second in a later pass.
  write({exact_launch(7, 1, 10, 3),
         exact_intervals(1, {{0x10000, 0x10100, AccessKind::Read},
                             {0x10f00, 0x20040, AccessKind::Write}})});
  write({exact_intervals(1, {{0x30000, 0x30020, AccessKind::ReadWrite}})});
  finish();
  EXPECT_EQ(access_rows(), (std::vector<std::string>{
                               "1 0 10000-10100 r",
                               "1 3840 10f00-11000 w",
                               "- - 11000-20000 w",
                               "2 0 20000-20040 w",
                               "- - 30000-30020 rw",
                           }));
  EXPECT_EQ(scalar("SELECT kernel_id FROM exact_launches WHERE id = 1"),
            scalar("SELECT id FROM kernels WHERE call_correlation_id = 7"));
  EXPECT_EQ(scalar("SELECT count(*) FROM meta WHERE key = 'exact.unlinked_launches' "
                   "AND value = '0'"),
            1);
}

// A graph launch: one call, several kernels; node launches by GPU order.
TEST_F(ExactRowsTest, GraphNodeLaunchesJoinTheCallsKernelsInGpuOrder) {
  Record node = launch(9, 10);
  write({node, gpu_kernel(9, 300)});
  Record other = launch(9, 10);
  write({other, gpu_kernel(9, 100)});
  Record first = exact_launch(9, 1, 10, 0), second = exact_launch(9, 2, 10, 0);
  first.exact_launch.graph_position = 0;
  second.exact_launch.graph_position = 1;
  write({first, second});
  finish();
  EXPECT_EQ(scalar("SELECT k.gpu_start_ns FROM exact_launches l JOIN kernels k "
                   "ON k.id = l.kernel_id WHERE l.id = 1"),
            100);
  EXPECT_EQ(scalar("SELECT k.gpu_start_ns FROM exact_launches l JOIN kernels k "
                   "ON k.id = l.kernel_id WHERE l.id = 2"),
            300);
}

TEST_F(ExactRowsTest, RangesResolveToWhatWasAllocatedWhenTheKernelWasLaunched) {
  Record first = allocation(0x10000, 0x1000, AllocKind::Device, 1);
  ASSERT_TRUE(registry_.remove(0x10000, 50).has_value());
  Record freed{};
  freed.type = RecordType::Free;
  freed.free.alloc_id = first.allocation.alloc_id;
  freed.free.ns = 50;
  Record second = allocation(0x10000, 0x2000, AllocKind::Device, 60);
  write({first, freed, second, exact_launch(0, 1, 20, 1),
         exact_intervals(1, {{0x10000, 0x10800, AccessKind::Read}}),
         exact_launch(0, 2, 70, 1),
         exact_intervals(2, {{0x10000, 0x10800, AccessKind::Write}})});
  finish();
  EXPECT_EQ(access_rows(), (std::vector<std::string>{"1 0 10000-10800 r", "2 0 10000-10800 w"}));
  EXPECT_EQ(scalar("SELECT count(*) FROM exact_launches WHERE kernel_id IS NULL"), 2)
      << "a sanitizer-only run's launches have no call to join";
}

}  // namespace
}  // namespace apptracer

namespace apptracer {
namespace {

// Work a graph launch ran gets its node's parameters (store/graph_nodes.h):
// GPU activity names the exec's copy of a node, whose original the program made.
class GraphStoreTest : public StoreJoinTest {
 protected:
  static constexpr uint64_t kNode = 0x100000001, kCopy = 0x300000001;

  Record node(GraphNodeEvent event, uint64_t id, uint64_t original, GraphNodeType type) {
    Record r{};
    r.type = RecordType::GraphNode;
    r.graph_node.event = event;
    r.graph_node.node_id = id;
    r.graph_node.template_node_id = original;
    r.graph_node.graph_id = static_cast<uint32_t>(id >> 32);
    r.graph_node.type = type;
    r.graph_node.ns = 5;
    return r;
  }
  Record kernel_node(uint64_t id) {
    Record r = node(GraphNodeEvent::Created, id, 0, GraphNodeType::Kernel);
    r.graph_node.has_params = true;
    KernelNodeParams& k = r.graph_node.params.kernel;
    k.name_id = strings_.intern("_Z4axpyPfPKfmi");  // axpy(float*, float const*, unsigned long, int)
    k.function_handle = 0xf00;
    k.grid[0] = 3;
    k.block[0] = 64;
    k.args_captured = true;
    return r;
  }
  Record graph_launch(uint32_t correlation, uint64_t start) {
    Record r{};
    r.type = RecordType::ApiCall;
    r.correlation_id = r.own_correlation_id = correlation;
    r.api.start_ns = start;
    r.api.end_ns = start + 1;
    r.api.stream = -1;
    r.api.device = 0;
    r.api.domain = ApiDomain::Driver;
    r.api.cbid = CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch;
    r.api.name = "cuGraphLaunch";
    return r;
  }
  Record graph_kernel(uint32_t correlation, uint64_t start, uint64_t node_id) {
    Record r = gpu_kernel(correlation, start);
    r.gpu_kernel.graph_node_id = node_id;
    r.gpu_kernel.name_id = strings_.intern("_Z4axpyPfPKfmi");
    return r;
  }
};

TEST_F(GraphStoreTest, EachLaunchOfAGraphResolvesItsKernelNodesArgumentsAtThatLaunch) {
  Record first = allocation(0x10000, 0x1000, AllocKind::Device, 1);
  Record x = allocation(0x20000, 0x1000, AllocKind::Device, 2);
  // The same address, reused by another allocation between the two launches.
  write({first, x, kernel_node(kNode), args(0, {{0x10010, 0, 0, 8}, {0x20000, 8, 1, 8}}),
         node(GraphNodeEvent::Cloned, kCopy, kNode, GraphNodeType::Kernel), graph_launch(50, 100),
         graph_kernel(50, 120, kCopy)});
  registry_.remove(0x10000, 150);
  Record second = allocation(0x10000, 0x1000, AllocKind::Device, 160);
  write_and_settle({second, graph_launch(51, 200), graph_kernel(51, 220, kCopy)});

  Database db = read();
  Statement q = db.prepare(
      "SELECT k.call_correlation_id, k.launch_kind, k.api_start_ns, k.function_handle, "
      "a.param_index, a.alloc_id, a.alloc_offset, a.access FROM kernels k "
      "JOIN kernel_args a ON a.kernel_id = k.id ORDER BY k.call_correlation_id, a.offset");
  ASSERT_TRUE(q.step()) << "the graph's kernel has arguments";
  EXPECT_EQ(q.int64(0), 50);
  EXPECT_EQ(q.int64(1), static_cast<int>(LaunchKind::Graph));
  EXPECT_EQ(q.int64(2), 100) << "its launch's call";
  EXPECT_EQ(q.int64(3), 0xf00);
  EXPECT_EQ(q.int64(5), first.allocation.alloc_id);
  EXPECT_EQ(q.int64(6), 16);
  EXPECT_EQ(q.int64(7), static_cast<int>(AccessKind::ReadWrite));
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(5), x.allocation.alloc_id);
  EXPECT_EQ(q.int64(7), static_cast<int>(AccessKind::Read)) << "const in the signature";
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 51);
  EXPECT_EQ(q.int64(5), second.allocation.alloc_id) << "resolved again at the second launch";
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(5), x.allocation.alloc_id);
  EXPECT_FALSE(q.step());
  EXPECT_EQ(scalar("SELECT count(DISTINCT arg_set_id) FROM kernels"), 2);
}

TEST_F(GraphStoreTest, NewParametersOnAnExecsNodeHoldForLaunchesAfterThem) {
  Record y = allocation(0x10000, 0x1000, AllocKind::Device, 1);
  Record z = allocation(0x40000, 0x1000, AllocKind::Device, 2);
  Record update = kernel_node(kCopy);
  update.graph_node.event = GraphNodeEvent::ParamsSet;
  update.graph_node.ns = 150;
  // Both launches' GPU activity comes after the update.
  write_and_settle({y, z, kernel_node(kNode), args(0, {{0x10000, 0, 0, 8}}),
                    node(GraphNodeEvent::Cloned, kCopy, kNode, GraphNodeType::Kernel),
                    graph_launch(50, 100), update, args(0, {{0x40000, 0, 0, 8}}),
                    graph_launch(51, 200), graph_kernel(50, 120, kCopy),
                    graph_kernel(51, 220, kCopy)});
  Database db = read();
  Statement q = db.prepare(
      "SELECT k.call_correlation_id, a.alloc_id FROM kernels k JOIN kernel_args a "
      "ON a.kernel_id = k.id ORDER BY k.call_correlation_id");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(1), y.allocation.alloc_id) << "launched before the update";
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(1), z.allocation.alloc_id) << "launched after it";
  EXPECT_FALSE(q.step());
  EXPECT_EQ(scalar("SELECT count(*) FROM graph_nodes"), 2) << "an update makes no node";
}

TEST_F(GraphStoreTest, NodesAreRowsAndAnExecsCopyNamesItsOriginal) {
  Record captured = kernel_node(kNode);
  captured.graph_node.captured = true;
  captured.correlation_id = captured.own_correlation_id = 40;
  // An instantiation first makes the copy (Created, read from the copy), then says whose it is.
  Record copy = kernel_node(kCopy);
  write_and_settle({captured, args(40, {}), copy, args(0, {}),
                    node(GraphNodeEvent::Cloned, kCopy, kNode, GraphNodeType::Kernel)});
  EXPECT_EQ(scalar("SELECT count(*) FROM graph_nodes"), 2) << "one row per node";
  EXPECT_EQ(scalar("SELECT captured FROM graph_nodes WHERE call_correlation_id = 40"), 1);
  EXPECT_EQ(scalar("SELECT template_node_id FROM graph_nodes WHERE node_id = " +
                   std::to_string(kCopy)),
            static_cast<int64_t>(kNode));
  EXPECT_EQ(scalar("SELECT graph_id FROM graph_nodes WHERE node_id = " + std::to_string(kCopy)),
            3);
}

TEST_F(GraphStoreTest, CopiesAndMemsetsAGraphRanResolveTheirNodesAddresses) {
  Record y = allocation(0x10000, 0x1000, AllocKind::Device, 1);
  Record copy_node = node(GraphNodeEvent::Created, kNode, 0, GraphNodeType::Memcpy);
  copy_node.graph_node.has_params = true;
  copy_node.graph_node.params.copy = CopyNodeParams{0x20000000, 0x10040, 64, CopyKind::HtoD};
  Record set_node = node(GraphNodeEvent::Created, kNode + 1, 0, GraphNodeType::Memset);
  set_node.graph_node.has_params = true;
  set_node.graph_node.params.memset = MemsetNodeParams{0x10080, 32, 7, 1};
  Record transfer = gpu_copy(60, 130, 140);
  transfer.gpu_memcpy.graph_node_id = kCopy;
  Record set{};
  set.type = RecordType::GpuMemset;
  set.correlation_id = 60;
  set.gpu_memset.start_ns = 150;
  set.gpu_memset.end_ns = 151;
  set.gpu_memset.bytes = 32;
  set.gpu_memset.graph_node_id = kCopy + 1;
  write_and_settle({y, copy_node, set_node,
                    node(GraphNodeEvent::Cloned, kCopy, kNode, GraphNodeType::Memcpy),
                    node(GraphNodeEvent::Cloned, kCopy + 1, kNode + 1, GraphNodeType::Memset),
                    graph_launch(60, 100), transfer, set});
  EXPECT_EQ(scalar("SELECT dst_alloc_id FROM memcpys WHERE call_correlation_id = 60"),
            y.allocation.alloc_id);
  EXPECT_EQ(scalar("SELECT dst_offset FROM memcpys"), 0x40);
  EXPECT_EQ(scalar("SELECT src_address FROM memcpys"), 0x20000000);
  EXPECT_EQ(scalar("SELECT api_start_ns FROM memcpys"), 100);
  EXPECT_EQ(scalar("SELECT alloc_id FROM memsets WHERE call_correlation_id = 60"),
            y.allocation.alloc_id);
  EXPECT_EQ(scalar("SELECT alloc_offset FROM memsets"), 0x80);
  EXPECT_EQ(scalar("SELECT value FROM memsets"), 7);
}

}  // namespace
}  // namespace apptracer

namespace apptracer {
namespace {

// NVTX records -> nvtx_ranges rows (store/nvtx_rows.h).
class NvtxStoreTest : public TraceStoreTest {
 protected:
  Record nvtx(uint32_t tid, NvtxEvent event, uint64_t ns, const char* name = nullptr,
              const char* domain = nullptr, uint64_t range_id = 0) {
    Record r{};
    r.type = RecordType::Nvtx;
    r.tid = tid;
    r.nvtx.event = event;
    r.nvtx.ns = ns;
    r.nvtx.name_id = name ? strings_.intern(name) : 0;
    r.nvtx.domain_id = domain ? strings_.intern(domain) : 0;
    r.nvtx.range_id = range_id;
    return r;
  }
  void finish() {
    store_->begin();
    store_->finish();
    store_->commit();
  }
};

TEST_F(NvtxStoreTest, PushesPairWithPopsPerThreadAndDomainWithTheirDepth) {
  write({nvtx(1, NvtxEvent::Push, 10, "step"), nvtx(2, NvtxEvent::Push, 11, "other thread"),
         nvtx(1, NvtxEvent::Push, 12, "forward"), nvtx(1, NvtxEvent::Push, 13, "nccl", "NCCL"),
         nvtx(1, NvtxEvent::Pop, 14), nvtx(1, NvtxEvent::Pop, 15, nullptr, "NCCL"),
         nvtx(2, NvtxEvent::Pop, 16), nvtx(1, NvtxEvent::Pop, 17), nvtx(1, NvtxEvent::Pop, 18)});
  finish();
  Database db = read();
  Statement q = db.prepare(
      "SELECT s.text, r.tid, r.depth, r.start_ns, r.end_ns, r.domain_id IS NULL, r.kind "
      "FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id ORDER BY r.start_ns");
  struct Expected {
    const char* name;
    int64_t tid, depth, start, end, default_domain;
  };
  for (const Expected& e : {Expected{"step", 1, 0, 10, 17, 1}, Expected{"other thread", 2, 0, 11, 16, 1},
                            Expected{"forward", 1, 1, 12, 14, 1}, Expected{"nccl", 1, 0, 13, 15, 0}}) {
    ASSERT_TRUE(q.step()) << e.name;
    EXPECT_EQ(q.text(0), e.name);
    EXPECT_EQ(q.int64(1), e.tid) << e.name;
    EXPECT_EQ(q.int64(2), e.depth) << e.name << ": nesting counts its thread and domain only";
    EXPECT_EQ(q.int64(3), e.start) << e.name;
    EXPECT_EQ(q.int64(4), e.end) << e.name;
    EXPECT_EQ(q.int64(5), e.default_domain) << e.name;
    EXPECT_EQ(q.int64(6), static_cast<int>(NvtxKind::PushPop));
  }
  EXPECT_FALSE(q.step()) << "the unmatched pop closes nothing";
}

TEST_F(NvtxStoreTest, StartEndRangesCrossThreadsMarksAreInstantsOpenRangesStayOpen) {
  write({nvtx(1, NvtxEvent::Start, 10, "load", nullptr, 7), nvtx(1, NvtxEvent::Mark, 11, "here"),
         nvtx(2, NvtxEvent::End, 12, nullptr, nullptr, 7), nvtx(1, NvtxEvent::Push, 13, "open")});
  finish();
  EXPECT_EQ(scalar("SELECT end_ns FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id "
                   "WHERE s.text = 'load' AND r.tid = 1"),
            12) << "ended on another thread";
  EXPECT_EQ(scalar("SELECT kind FROM nvtx_ranges WHERE start_ns = 10"),
            static_cast<int>(NvtxKind::StartEnd));
  EXPECT_EQ(scalar("SELECT count(*) FROM nvtx_ranges WHERE start_ns = 11 AND end_ns = 11 AND "
                   "kind = " + std::to_string(static_cast<int>(NvtxKind::Mark))),
            1);
  EXPECT_EQ(scalar("SELECT count(*) FROM nvtx_ranges WHERE start_ns = 13 AND end_ns IS NULL"), 1)
      << "still open when the trace ended";
}

}  // namespace
}  // namespace apptracer
