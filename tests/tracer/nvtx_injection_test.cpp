// The tracer as an NVTX tool, driven by a fabricated NVTX instance: the slots
// it fills and the records they append (tracer/translate/nvtx_injection).
#include "translate/nvtx_injection.h"

#include <gtest/gtest.h>

#include "translation_fixture.h"

namespace apptracer::testing {
namespace {

using nvtx_abi::EventAttributes;
using nvtx_abi::FunctionPointer;

// What nvtx3 hands its tool: per module, the addresses of its slots ([0] unused).
struct FakeNvtxInstance {
  static constexpr unsigned kSlots = 16;
  FunctionPointer core[kSlots] = {};
  FunctionPointer core2[kSlots] = {};
  FunctionPointer* core_table[kSlots] = {};
  FunctionPointer* core2_table[kSlots] = {};

  FakeNvtxInstance() {
    for (unsigned i = 0; i < kSlots; ++i) {
      core_table[i] = &core[i];
      core2_table[i] = &core2[i];
    }
    current = this;
  }
  template <typename Function>
  Function* core_slot(unsigned id) const { return reinterpret_cast<Function*>(core[id]); }
  template <typename Function>
  Function* core2_slot(unsigned id) const { return reinterpret_cast<Function*>(core2[id]); }

  static int get_module(int module, nvtx_abi::FunctionTable* table, unsigned* size) {
    if (module == nvtx_abi::kModuleCore) *table = current->core_table;
    else if (module == nvtx_abi::kModuleCore2) *table = current->core2_table;
    else return 0;
    *size = kSlots;
    return 1;
  }
  static const void* export_table(uint32_t id) {
    static const nvtx_abi::ExportTableCallbacks callbacks{sizeof(nvtx_abi::ExportTableCallbacks),
                                                          get_module};
    return id == nvtx_abi::kExportTableCallbacks ? &callbacks : nullptr;
  }
  static inline FakeNvtxInstance* current = nullptr;
};

class NvtxInjectionTest : public TranslationTest {
 protected:
  void SetUp() override {
    set_nvtx_context(&ctx_);
    ASSERT_EQ(initialize_nvtx_injection(&FakeNvtxInstance::export_table), 1);
  }
  void TearDown() override { set_nvtx_context(nullptr); }

  std::vector<NvtxRecord> nvtx_records() {
    std::vector<NvtxRecord> out;
    for (const Record& r : drained()) {
      if (r.type == RecordType::Nvtx) out.push_back(r.nvtx);
    }
    return out;
  }

  FakeNvtxInstance nvtx_;
};

TEST_F(NvtxInjectionTest, PushAndPopRecordTheMessageAndReturnTheLevel) {
  auto push = nvtx_.core_slot<int(const char*)>(nvtx_abi::kRangePushA);
  auto pop = nvtx_.core_slot<int()>(nvtx_abi::kRangePop);
  ASSERT_TRUE(push && pop);
  int level = push("outer");  // levels count this thread's open pushes (earlier tests' too)
  EXPECT_EQ(push("inner"), level + 1);
  EXPECT_EQ(pop(), level + 1);
  EXPECT_EQ(pop(), level);
  std::vector<NvtxRecord> records = nvtx_records();
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].event, NvtxEvent::Push);
  EXPECT_EQ(records[0].name_id, strings_.intern("outer"));
  EXPECT_EQ(records[1].name_id, strings_.intern("inner"));
  EXPECT_EQ(records[2].event, NvtxEvent::Pop);
  EXPECT_EQ(records[0].domain_id, 0u) << "the default domain";
  EXPECT_LT(records[0].ns, records[3].ns);
}

TEST_F(NvtxInjectionTest, DomainsAndRegisteredStringsAreTheirNames) {
  auto create = nvtx_.core2_slot<void*(const char*)>(nvtx_abi::kDomainCreateA);
  auto register_string = nvtx_.core2_slot<void*(void*, const char*)>(nvtx_abi::kDomainRegisterStringA);
  auto push = nvtx_.core2_slot<int(void*, const EventAttributes*)>(nvtx_abi::kDomainRangePushEx);
  auto pop = nvtx_.core2_slot<int(void*)>(nvtx_abi::kDomainRangePop);
  ASSERT_TRUE(create && register_string && push && pop);
  void* domain = create("NCCL");
  EventAttributes attributes{};
  attributes.version = 3;
  attributes.size = sizeof attributes;
  attributes.message_type = nvtx_abi::kMessageRegistered;
  attributes.message = register_string(domain, "allreduce");
  push(domain, &attributes);
  pop(domain);
  attributes.message_type = nvtx_abi::kMessageAscii;
  attributes.message = "plain";
  push(domain, &attributes);
  std::vector<NvtxRecord> records = nvtx_records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].domain_id, strings_.intern("NCCL"));
  EXPECT_EQ(records[0].name_id, strings_.intern("allreduce"));
  EXPECT_EQ(records[1].domain_id, strings_.intern("NCCL"));
  EXPECT_EQ(records[2].name_id, strings_.intern("plain"));
}

TEST_F(NvtxInjectionTest, StartEndRangesGetIdsOfOursAndMarksAreInstants) {
  auto start = nvtx_.core_slot<uint64_t(const char*)>(nvtx_abi::kRangeStartA);
  auto end = nvtx_.core_slot<void(uint64_t)>(nvtx_abi::kRangeEnd);
  auto mark = nvtx_.core_slot<void(const char*)>(nvtx_abi::kMarkA);
  ASSERT_TRUE(start && end && mark);
  uint64_t first = start("load");
  uint64_t second = start("compute");
  EXPECT_NE(first, second);
  end(first);
  mark("checkpoint");
  std::vector<NvtxRecord> records = nvtx_records();
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].event, NvtxEvent::Start);
  EXPECT_EQ(records[0].range_id, first);
  EXPECT_EQ(records[2].event, NvtxEvent::End);
  EXPECT_EQ(records[2].range_id, first);
  EXPECT_EQ(records[3].event, NvtxEvent::Mark);
  EXPECT_EQ(records[3].name_id, strings_.intern("checkpoint"));
}

TEST_F(NvtxInjectionTest, BeforeTheTracerStartsCallsRecordNothingButStillNest) {
  set_nvtx_context(nullptr);
  auto push = nvtx_.core_slot<int(const char*)>(nvtx_abi::kRangePushA);
  auto pop = nvtx_.core_slot<int()>(nvtx_abi::kRangePop);
  int level = push("early");
  EXPECT_EQ(pop(), level);
  EXPECT_TRUE(nvtx_records().empty());
}

TEST(NvtxInjection, AnInstanceWithoutTheCallbacksTableIsRefused) {
  EXPECT_EQ(initialize_nvtx_injection([](uint32_t) -> const void* { return nullptr; }), 0);
  EXPECT_EQ(initialize_nvtx_injection(nullptr), 0);
}

}  // namespace
}  // namespace apptracer::testing
