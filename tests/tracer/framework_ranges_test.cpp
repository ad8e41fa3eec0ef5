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

  static Record push(FrameworkRangeKind kind, uint32_t name_id, uint64_t ns, uint32_t tid = 1,
                     int64_t seq = -1) {
    Record r{};
    r.type = RecordType::FrameworkRange;
    r.tid = tid;
    r.framework_range = {ns, seq, name_id, kind, FrameworkRangeEvent::Push};
    return r;
  }
  static Record pop(FrameworkRangeKind kind, uint64_t ns, uint32_t tid = 1) {
    Record r{};
    r.type = RecordType::FrameworkRange;
    r.tid = tid;
    r.framework_range = {ns, -1, 0, kind, FrameworkRangeEvent::Pop};
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

TEST_F(FrameworkRangeRowsTest, PushesPairWithTheNextPopOfTheirKindOnTheirThread) {
  using K = FrameworkRangeKind;
  write_and_finish({
      push(K::Module, 7, 100),             // layer1 on thread 1
      push(K::Op, 8, 110, 1, 42),          // an op inside it, seq 42
      push(K::Module, 9, 115),             // a child module: depth 1 among modules
      push(K::Op, 8, 120, 2),              // thread 2's op: its own stack
      pop(K::Module, 130),                 // closes module 9, not the op
      pop(K::Op, 140),                     // closes thread 1's op
      pop(K::Op, 150, 2),
      pop(K::Module, 160),                 // closes module 7
      pop(K::Backward, 170),               // nothing pushed: nothing closed
      push(K::Backward, 10, 180, 1, 42),   // still open at the end
  });
  EXPECT_EQ(rows(), (std::vector<std::string>{
                        "1 7 1 0 -1 100..160",
                        "2 8 1 0 42 110..140",
                        "1 9 1 1 -1 115..130",
                        "2 8 2 0 -1 120..150",
                        "3 10 1 0 42 180..-1",
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

TEST(FrameworkRanges, AreRecordedOnTheCallingThreadWithInternedNames) {
  StringTable strings;
  frameworks::start_recording({&buffers(), fixed_clock, nullptr, &strings});
  uint32_t conv = frameworks::range_name("layer1.0.conv2");
  EXPECT_NE(conv, 0u);
  EXPECT_EQ(frameworks::range_name("layer1.0.conv2"), conv) << "one id per name";
  EXPECT_EQ(strings.text(conv), "layer1.0.conv2");
  EXPECT_TRUE(frameworks::push_range(FrameworkRangeKind::Module, conv));
  EXPECT_TRUE(frameworks::push_range(FrameworkRangeKind::Op, frameworks::range_name("aten::add_"), 5));
  EXPECT_TRUE(frameworks::pop_range(FrameworkRangeKind::Op));
  EXPECT_TRUE(frameworks::pop_range(FrameworkRangeKind::Module));
  frameworks::start_recording({});
  EXPECT_FALSE(frameworks::push_range(FrameworkRangeKind::Module, conv))
      << "nothing is recorded once not recording";
  EXPECT_EQ(frameworks::range_name("layer2"), 0u);

  std::vector<FrameworkRangeRecord> ranges = drained_ranges();
  ASSERT_EQ(ranges.size(), 4u);
  EXPECT_EQ(ranges[0].kind, FrameworkRangeKind::Module);
  EXPECT_EQ(ranges[0].event, FrameworkRangeEvent::Push);
  EXPECT_EQ(ranges[0].name_id, conv);
  EXPECT_EQ(ranges[0].seq, -1);
  EXPECT_EQ(ranges[0].ns, 777u);
  EXPECT_EQ(ranges[1].kind, FrameworkRangeKind::Op);
  EXPECT_EQ(ranges[1].seq, 5);
  EXPECT_EQ(strings.text(ranges[1].name_id), "aten::add_");
  EXPECT_EQ(ranges[2].event, FrameworkRangeEvent::Pop);
  EXPECT_EQ(ranges[3].kind, FrameworkRangeKind::Module);
}

TEST(FrameworkRanges, WithoutAStringTableNothingIsRecorded) {
  frameworks::start_recording({&buffers(), fixed_clock, nullptr});
  EXPECT_EQ(frameworks::range_name("layer1"), 0u);
  EXPECT_FALSE(frameworks::push_range(FrameworkRangeKind::Module, 1));
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
