// Framework ranges (PyTorch modules, ops, backward nodes): the records
// tracer/frameworks/ makes on the calling thread, and the framework_ranges
// rows the store pairs them into. Records of the store tests are made by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "buffer/string_table.h"
#include "frameworks/framework_ranges.h"
#include "frameworks/sub_allocation_events.h"
#include "frameworks/torch_ops.h"
#include "store/trace_store.h"
#include "store_fixture.h"

namespace apptracer {
namespace {

class FrameworkRangeRowsTest : public StoreFixture {
 protected:
  FrameworkRangeRowsTest() : StoreFixture("framework-ranges") {}

  static Record range(FrameworkRangeKind kind, uint32_t name_id, uint64_t start, uint64_t end,
                      uint32_t depth, uint32_t tid = 1, int64_t seq = -1) {
    Record r{};
    r.type = RecordType::FrameworkRange;
    r.tid = tid;
    r.framework_range = {start, end, seq, name_id, depth, kind};
    return r;
  }
  void write_and_finish(std::vector<Record> records) {
    store_->begin();
    store_->write(records.data(), records.size());
    store_->end_pass(UINT64_MAX);
    store_->finish();
    store_->commit();
  }
  // Rows as "kind name tid depth seq start..end", by start then kind.
  std::vector<std::string> rows() {
    Database db(path_, Database::Mode::ReadOnly);
    Statement q = db.prepare(
        "SELECT kind, coalesce(name_id, 0), tid, depth, coalesce(seq, -1), start_ns, "
        "coalesce(end_ns, -1) FROM framework_ranges ORDER BY start_ns, kind");
    std::vector<std::string> out;
    while (q.step()) {
      std::string row;
      for (int column = 0; column < 7; ++column) {
        row += (column == 6 ? ".." : column ? " " : "") + std::to_string(q.int64(column));
      }
      out.push_back(row);
    }
    return out;
  }
};

// Ranges come whole, inner ones first (each is recorded as it ends).
TEST_F(FrameworkRangeRowsTest, RangesAreRowsAsRecorded) {
  using K = FrameworkRangeKind;
  write_and_finish({
      range(K::Op, 8, 110, 140, 0, 1, 42),  // an op inside layer1, seq 42
      range(K::Module, 9, 115, 130, 1),     // a child module: depth 1 among modules
      range(K::Op, 8, 120, 150, 0, 2),      // thread 2's op
      range(K::Module, 7, 100, 160, 0),     // layer1 on thread 1
  });
  EXPECT_EQ(rows(), (std::vector<std::string>{
                        "1 7 1 0 -1 100..160",
                        "2 8 1 0 42 110..140",
                        "1 9 1 1 -1 115..130",
                        "2 8 2 0 -1 120..150",
                    }));
}

// --- the recording side --------------------------------------------------------

uint64_t fixed_clock() { return 777; }

RecordBuffers& buffers() {
  static auto* instance = new RecordBuffers(1 << 20);
  return *instance;
}

std::vector<FrameworkRangeRecord> drained_ranges() {
  std::vector<FrameworkRangeRecord> out;
  buffers().drain([&](const Record* records, size_t count) {
    for (size_t i = 0; i < count; ++i) {
      if (records[i].type == RecordType::FrameworkRange) {
        EXPECT_EQ(records[i].tid, RecordBuffers::current_tid());
        out.push_back(records[i].framework_range);
      }
    }
  });
  return out;
}

uint64_t fake_now = 0;
uint64_t ticking_clock() { return fake_now += 10; }

// Something else recorded on the calling thread, as a launch would be.
void record_launch() {
  Record r{};
  r.type = RecordType::Kernel;
  buffers().append(r);
}

uint32_t name_add(const void*) { return frameworks::range_name("aten::add_"); }

TEST(FrameworkRanges, OnlyRangesInWhichSomethingWasRecordedAreKept) {
  StringTable strings;
  fake_now = 0;
  frameworks::start_recording({&buffers(), ticking_clock, nullptr, &strings});
  uint32_t conv = frameworks::range_name("layer1.0.conv2");
  EXPECT_NE(conv, 0u);
  EXPECT_EQ(frameworks::range_name("layer1.0.conv2"), conv) << "one id per name";
  EXPECT_EQ(strings.text(conv), "layer1.0.conv2");
  // The clock ticks 10 per reading; a range dropped reads it only as it opens.
  frameworks::open_range(FrameworkRangeKind::Module, conv);       // at 10
  frameworks::open_range(FrameworkRangeKind::Op);                 // at 20
  EXPECT_FALSE(frameworks::close_range(-1, false, &name_add))     // a view: no work
      << "an op that did nothing is not recorded";
  frameworks::open_range(FrameworkRangeKind::Op);                 // at 30
  EXPECT_TRUE(frameworks::close_range(7, true, &name_add))        // made autograd node 7, at 40
      << "an op kept for its autograd node";
  frameworks::open_range(FrameworkRangeKind::Op);                 // at 50
  frameworks::open_range(FrameworkRangeKind::Backward);           // at 60
  record_launch();
  EXPECT_TRUE(frameworks::close_range(5, false, &name_add));     // at 70
  EXPECT_TRUE(frameworks::close_range(-1, false, &name_add))     // at 80: its child was recorded
      << "a range around a recorded one is recorded";
  EXPECT_TRUE(frameworks::close_range());                        // the module, at 90
  EXPECT_FALSE(frameworks::close_range()) << "nothing open: nothing closed";
  frameworks::start_recording({});
  frameworks::open_range(FrameworkRangeKind::Module, conv);
  EXPECT_FALSE(frameworks::close_range(-1, true)) << "nothing is recorded once not recording";
  EXPECT_EQ(frameworks::range_name("layer2"), 0u);

  std::vector<FrameworkRangeRecord> ranges = drained_ranges();
  ASSERT_EQ(ranges.size(), 4u);
  EXPECT_EQ(ranges[0].kind, FrameworkRangeKind::Op);
  EXPECT_EQ(ranges[0].seq, 7);
  EXPECT_EQ(ranges[0].start_ns, 30u);
  EXPECT_EQ(ranges[0].end_ns, 40u);
  EXPECT_EQ(ranges[0].depth, 0u);
  EXPECT_EQ(strings.text(ranges[0].name_id), "aten::add_");
  EXPECT_EQ(ranges[1].kind, FrameworkRangeKind::Backward);
  EXPECT_EQ(ranges[1].start_ns, 60u);
  EXPECT_EQ(ranges[2].kind, FrameworkRangeKind::Op);
  EXPECT_EQ(ranges[2].start_ns, 50u);
  EXPECT_EQ(ranges[3].kind, FrameworkRangeKind::Module);
  EXPECT_EQ(ranges[3].name_id, conv);
  EXPECT_EQ(ranges[3].seq, -1);
  EXPECT_EQ(ranges[3].start_ns, 10u);
  EXPECT_EQ(ranges[3].end_ns, 90u);
}

TEST(FrameworkRanges, DepthCountsOpenRangesOfTheSameKind) {
  StringTable strings;
  frameworks::start_recording({&buffers(), ticking_clock, nullptr, &strings, true});
  frameworks::open_range(FrameworkRangeKind::Module, 1);
  frameworks::open_range(FrameworkRangeKind::Op, 2);
  frameworks::open_range(FrameworkRangeKind::Module, 3);
  EXPECT_TRUE(frameworks::close_range()) << "every_range: kept though nothing was recorded";
  EXPECT_TRUE(frameworks::close_range());
  EXPECT_TRUE(frameworks::close_range());
  frameworks::start_recording({});
  std::vector<FrameworkRangeRecord> ranges = drained_ranges();
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].name_id, 3u);
  EXPECT_EQ(ranges[0].depth, 1u) << "inside one module";
  EXPECT_EQ(ranges[1].name_id, 2u);
  EXPECT_EQ(ranges[1].depth, 0u) << "the only op";
  EXPECT_EQ(ranges[2].depth, 0u);
}

TEST(FrameworkRanges, WithoutAStringTableNothingIsRecorded) {
  frameworks::start_recording({&buffers(), fixed_clock, nullptr});
  EXPECT_EQ(frameworks::range_name("layer1"), 0u);
  frameworks::open_range(FrameworkRangeKind::Module, 1);
  record_launch();
  EXPECT_FALSE(frameworks::close_range());
  frameworks::start_recording({});
  EXPECT_TRUE(drained_ranges().empty());
}

TEST(TorchOps, OnlyKnownVersionsHaveALayout) {
  EXPECT_EQ(frameworks::torch_sequence_nr_offset("2.11.0+cu130"), 200);
  EXPECT_EQ(frameworks::torch_sequence_nr_offset("2.15.0+cu130"), 200);
  EXPECT_EQ(frameworks::torch_sequence_nr_offset("2.9.1"), -1);
}

TEST(TorchOps, AttachRefusesWhatItCannotTrust) {
  using frameworks::OpsAttachStatus;
  EXPECT_EQ(frameworks::attach_torch_ops("2.11.0"), OpsAttachStatus::NotRecording);
  static std::vector<std::pair<std::string, std::string>>* seen;
  std::vector<std::pair<std::string, std::string>> meta;
  seen = &meta;
  StringTable strings;
  frameworks::start_recording(
      {&buffers(), fixed_clock,
       [](const std::string& k, const std::string& v) { seen->emplace_back(k, v); }, &strings});
  EXPECT_EQ(frameworks::attach_torch_ops("2.9.0"), OpsAttachStatus::UnknownVersion);
  // No torch in this process.
  EXPECT_EQ(frameworks::attach_torch_ops("2.11.0+cu130"), OpsAttachStatus::NoTorch);
  frameworks::start_recording({});
  ASSERT_EQ(meta.size(), 2u);
  EXPECT_EQ(meta[0].first, "framework_ranges.ops");
  EXPECT_NE(meta[0].second.find("torch 2.9.0 is not a version apptracer knows"), std::string::npos);
}

}  // namespace
}  // namespace apptracer
