// Framework allocators' blocks: the events tracer/frameworks/ records, and
// the sub_allocations rows the store makes of them. Records are made by hand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "buffer/allocation_registry.h"
#include "buffer/string_table.h"
#include "frameworks/sub_allocation_events.h"
#include "frameworks/torch_allocator.h"
#include "store/trace_store.h"
#include "store_fixture.h"

namespace apptracer {
namespace {

constexpr uint64_t kSegment = 0x7f0000000000;
constexpr uint64_t kSegmentBytes = 2 << 20;

class SubAllocationRowsTest : public StoreFixture {
 protected:
  SubAllocationRowsTest() : StoreFixture("sub-allocations") {}

  // The segment's cudaMalloc, as capture records it.
  Record segment(uint64_t ns) {
    Record r{};
    r.type = RecordType::Allocation;
    r.allocation.alloc_id = registry_.add(kSegment, kSegmentBytes, AllocKind::Device, 0, ns);
    r.allocation.address = kSegment;
    r.allocation.bytes = kSegmentBytes;
    r.allocation.ns = ns;
    r.allocation.device = 0;
    r.allocation.kind = AllocKind::Device;
    return r;
  }
  Record event(SubAllocationEvent what, uint64_t address, uint64_t bytes, uint64_t ns,
               uint32_t tid = 1, SubAllocator allocator = SubAllocator::PytorchCaching) {
    Record r{};
    r.type = RecordType::SubAllocation;
    r.tid = tid;
    r.sub_allocation.event = what;
    r.sub_allocation.allocator = allocator;
    r.sub_allocation.address = address;
    r.sub_allocation.bytes = bytes;
    r.sub_allocation.ns = ns;
    r.sub_allocation.device = 0;
    r.sub_allocation.stream = 0x5000;
    return r;
  }
  // drained_before: every thread's records before it are in this pass.
  void write(std::vector<Record> records, uint64_t drained_before = UINT64_MAX) {
    store_->begin();
    store_->write(records.data(), records.size());
    store_->end_pass(drained_before);
    store_->commit();
  }
  void finish() {
    store_->begin();
    store_->finish();
    store_->commit();
  }
  // Rows as "address+bytes alloc..free_requested..free", in id order.
  std::vector<std::string> rows() {
    Database db(path_, Database::Mode::ReadOnly);
    Statement q = db.prepare(
        "SELECT address - ?, bytes, alloc_ns, coalesce(free_requested_ns, -1), "
        "coalesce(free_ns, -1) FROM sub_allocations ORDER BY id");
    q.bind(1, static_cast<int64_t>(kSegment));
    std::vector<std::string> out;
    while (q.step()) {
      out.push_back("+" + std::to_string(q.int64(0)) + ":" + std::to_string(q.int64(1)) + " " +
                    std::to_string(q.int64(2)) + ".." + std::to_string(q.int64(3)) + ".." +
                    std::to_string(q.int64(4)));
    }
    return out;
  }
  std::string meta(const std::string& key) {
    Database db(path_, Database::Mode::ReadOnly);
    Statement q = db.prepare("SELECT value FROM meta WHERE key = ?");
    q.bind(1, key);
    return q.step() ? q.text(0) : "";
  }

};

TEST_F(SubAllocationRowsTest, BlocksAreRowsWithTheirSegmentAndLifetime) {
  Record seg = segment(5);
  write({seg, event(SubAllocationEvent::SegmentAlloc, kSegment, kSegmentBytes, 6),
         event(SubAllocationEvent::Alloc, kSegment, 4000, 10),
         event(SubAllocationEvent::Alloc, kSegment + 4096, 100, 11, /*tid=*/2),
         event(SubAllocationEvent::FreeRequested, kSegment, 4000, 20),
         event(SubAllocationEvent::Free, kSegment, 4000, 30, /*tid=*/3)});
  EXPECT_EQ(rows(), (std::vector<std::string>{"+0:4000 10..20..30", "+4096:100 11..-1..-1"}));
  Database db(path_, Database::Mode::ReadOnly);
  Statement q = db.prepare(
      "SELECT allocator, parent_alloc_id, parent_offset, device, stream_handle, alloc_tid, "
      "free_tid, block_bytes IS NULL, pool_id IS NULL FROM sub_allocations ORDER BY id");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), static_cast<int64_t>(SubAllocator::PytorchCaching));
  EXPECT_EQ(q.int64(1), static_cast<int64_t>(seg.allocation.alloc_id));
  EXPECT_EQ(q.int64(2), 0);
  EXPECT_EQ(q.int64(3), 0);
  EXPECT_EQ(q.int64(4), 0x5000);
  EXPECT_EQ(q.int64(5), 1);
  EXPECT_EQ(q.int64(6), 3) << "the thread that completed the free";
  EXPECT_EQ(q.int64(7), 1) << "PyTorch reports requested sizes only";
  EXPECT_EQ(q.int64(8), 1) << "the default pool";
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(2), 4096);
  EXPECT_EQ(q.int64(5), 2);
}

// The writer drains each thread's buffer in turn: a free (completed on
// another thread) may come before its block, and a reuse of the address
// before the free of the block it reuses.
TEST_F(SubAllocationRowsTest, FreesMatchTheirBlockWhateverOrderTheyArriveIn) {
  write({segment(5), event(SubAllocationEvent::SegmentAlloc, kSegment, kSegmentBytes, 6)});
  write({event(SubAllocationEvent::Free, kSegment, 4000, 20, 2),
         event(SubAllocationEvent::Free, kSegment, 512, 40, 2)});
  write({event(SubAllocationEvent::Alloc, kSegment, 4000, 10),
         event(SubAllocationEvent::Alloc, kSegment, 512, 30)});
  write({event(SubAllocationEvent::Alloc, kSegment, 256, 50),
         event(SubAllocationEvent::Alloc, kSegment + 8192, 256, 55)});
  write({event(SubAllocationEvent::Free, kSegment, 256, 60)});
  EXPECT_EQ(rows(), (std::vector<std::string>{"+0:4000 10..-1..20", "+0:512 30..-1..40",
                                              "+0:256 50..-1..60", "+8192:256 55..-1..-1"}));
}

// The main thread allocates and frees at one address while the autograd
// thread frees the block that reuses it. Handled in the order the buffers
// were drained, the autograd thread's free closed the older block and the
// newer one stayed live forever (PyTorch's live bytes 4-16 MiB above its own
// count on an H200 training run).
TEST_F(SubAllocationRowsTest, EventsAreHandledInTimeOrderWithinAPass) {
  write({segment(5), event(SubAllocationEvent::SegmentAlloc, kSegment, kSegmentBytes, 6)});
  write({event(SubAllocationEvent::Free, kSegment, 512, 40, 2),
         event(SubAllocationEvent::Alloc, kSegment, 512, 10),
         event(SubAllocationEvent::Free, kSegment, 512, 20),
         event(SubAllocationEvent::Alloc, kSegment, 512, 30)});
  EXPECT_EQ(rows(), (std::vector<std::string>{"+0:512 10..-1..20", "+0:512 30..-1..40"}));
}

// A pass sees the main thread's buffer as it was when the pass began, and
// the autograd thread's as it was later: events after the pass's start wait
// for the next pass, which has everything before them.
TEST_F(SubAllocationRowsTest, EventsAfterThePassBeganWaitForTheNext) {
  write({segment(5), event(SubAllocationEvent::SegmentAlloc, kSegment, kSegmentBytes, 6)});
  write({event(SubAllocationEvent::Alloc, kSegment, 512, 10),
         event(SubAllocationEvent::Free, kSegment, 512, 40, 2)},
        15);
  write({event(SubAllocationEvent::Free, kSegment, 512, 20),
         event(SubAllocationEvent::Alloc, kSegment, 512, 30)},
        50);
  EXPECT_EQ(rows(), (std::vector<std::string>{"+0:512 10..-1..20", "+0:512 30..-1..40"}));
}

TEST_F(SubAllocationRowsTest, EventsMatchingNoCudaAllocationRefuseTheAllocator) {
  // CuPy's pool here, so the refusal leaves the other tests' allocator alone.
  write({segment(5),
         event(SubAllocationEvent::Alloc, 0x9000000, 4000, 10, 1, SubAllocator::CupyPool),
         event(SubAllocationEvent::Alloc, kSegment, 4000, 11, 1, SubAllocator::CupyPool)});
  EXPECT_TRUE(rows().empty());
  EXPECT_FALSE(frameworks::allocator_enabled(SubAllocator::CupyPool))
      << "the tracker stops recording";
  EXPECT_NE(meta("sub_allocations.cupy.events").find("refused"), std::string::npos);
}

TEST_F(SubAllocationRowsTest, ASegmentMustBeACudaAllocationExactly) {
  write({segment(5), event(SubAllocationEvent::SegmentAlloc, kSegment, kSegmentBytes / 2, 6),
         event(SubAllocationEvent::Alloc, kSegment, 4000, 10)});
  EXPECT_TRUE(rows().empty());
  EXPECT_NE(meta("sub_allocations.pytorch.events").find("refused"), std::string::npos);
}

TEST_F(SubAllocationRowsTest, UnmatchedFreesAreCounted) {
  write({segment(5), event(SubAllocationEvent::SegmentAlloc, kSegment, kSegmentBytes, 6),
         event(SubAllocationEvent::Free, kSegment + 512, 100, 7)});
  finish();
  EXPECT_EQ(meta("sub_allocations.unmatched_frees").substr(0, 2), "1 ");
}

// --- the recording side --------------------------------------------------------

uint64_t fixed_clock() { return 12345; }

// Buffers outlive the test's threads (a thread hands its buffer back when it ends).
RecordBuffers& buffers() {
  static auto* instance = new RecordBuffers(1 << 20);
  return *instance;
}

TEST(FrameworkEvents, AreRecordedOnTheCallingThreadWithTheTraceClock) {
  frameworks::start_recording({&buffers(), fixed_clock, nullptr});
  frameworks::FrameworkEvent e;
  e.allocator = SubAllocator::PytorchCaching;
  e.event = SubAllocationEvent::FreeRequested;
  e.device = 1;
  e.address = 0x7f00;
  e.bytes = 4000;
  e.stream = 0x77;
  e.pool_id = -3;
  EXPECT_TRUE(frameworks::record_event(e));
  frameworks::start_recording({});
  EXPECT_FALSE(frameworks::record_event(e)) << "nothing is recorded once not recording";
  std::vector<Record> drained;
  buffers().drain([&](const Record* records, size_t count) {
    drained.insert(drained.end(), records, records + count);
  });
  std::vector<Record> events;
  for (const Record& r : drained) {
    if (r.type == RecordType::SubAllocation) events.push_back(r);
  }
  ASSERT_EQ(events.size(), 1u);
  const SubAllocationRecord& r = events[0].sub_allocation;
  EXPECT_EQ(events[0].tid, RecordBuffers::current_tid());
  EXPECT_EQ(r.ns, 12345u);
  EXPECT_EQ(r.event, SubAllocationEvent::FreeRequested);
  EXPECT_EQ(r.device, 1);
  EXPECT_EQ(r.address, 0x7f00u);
  EXPECT_EQ(r.bytes, 4000u);
  EXPECT_EQ(r.stream, 0x77u);
  EXPECT_EQ(r.pool_id, -3);
}

TEST(TorchAllocator, OnlyKnownVersionsHaveASlot) {
  EXPECT_EQ(frameworks::torch_attach_slot_offset("2.11.0+cu130"), 352);
  EXPECT_EQ(frameworks::torch_attach_slot_offset("2.11.1"), 352);
  EXPECT_EQ(frameworks::torch_attach_slot_offset("2.10.0+cu128"), -1);
  EXPECT_EQ(frameworks::torch_attach_slot_offset("2.1"), -1);
}

TEST(TorchAllocator, AttachRefusesWhatItCannotTrust) {
  using frameworks::AttachStatus;
  EXPECT_EQ(frameworks::attach_torch_tracker("2.11.0", "native"), AttachStatus::NotRecording);
  std::vector<std::pair<std::string, std::string>> meta;
  static std::vector<std::pair<std::string, std::string>>* seen;
  seen = &meta;
  frameworks::start_recording({&buffers(), fixed_clock, [](const std::string& k, const std::string& v) {
                                 seen->emplace_back(k, v);
                               }});
  EXPECT_EQ(frameworks::attach_torch_tracker("2.9.0", "native"), AttachStatus::UnknownVersion);
  EXPECT_EQ(frameworks::attach_torch_tracker("2.11.0", "cudaMallocAsync"),
            AttachStatus::OtherBackend);
  // No torch in this process.
  EXPECT_EQ(frameworks::attach_torch_tracker("2.11.0+cu130", "native"), AttachStatus::NoAllocator);
  frameworks::start_recording({});
  ASSERT_EQ(meta.size(), 3u);
  EXPECT_EQ(meta[0].first, "sub_allocations.pytorch");
  EXPECT_NE(meta[0].second.find("torch 2.9.0 is not a version apptracer knows"), std::string::npos);
}

}  // namespace
}  // namespace apptracer
