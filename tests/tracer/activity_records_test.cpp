// GPU activity records as CUPTI hands them over (fabricated here, one per
// kind we record) and the records translation makes of them.
#include "translate/activity_records.h"

#include <gtest/gtest.h>

#include "translation_fixture.h"

namespace apptracer::testing {
namespace {

using ActivityTest = TranslationTest;

TEST_F(ActivityTest, AKernelRecordKeepsItsTimesShapeStreamAndGraphNode) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.correlationId = 42;
  k.start = 1000;
  k.end = 2500;
  k.gridX = 8;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = k.blockZ = 1;
  k.staticSharedMemory = 128;
  k.dynamicSharedMemory = 64;
  k.registersPerThread = 32;
  k.streamId = 13;
  k.deviceId = 1;
  k.graphNodeId = 77;
  k.name = "_Z6kernelv";
  convert_activity(ctx_, reinterpret_cast<const CUpti_Activity&>(k));
  convert_activity(ctx_, reinterpret_cast<const CUpti_Activity&>(k));
  std::vector<Record> records = drained();
  ASSERT_EQ(records.size(), 2u);
  const GpuKernelRecord& g = records[0].gpu_kernel;
  EXPECT_EQ(records[0].type, RecordType::GpuKernel);
  EXPECT_EQ(records[0].correlation_id, 42u);
  EXPECT_EQ(g.start_ns, 1000u);
  EXPECT_EQ(g.end_ns, 2500u);
  EXPECT_EQ(g.grid[0], 8u);
  EXPECT_EQ(g.block[0], 256u);
  EXPECT_EQ(g.static_shared_bytes, 128u);
  EXPECT_EQ(g.registers_per_thread, 32u);
  EXPECT_EQ(g.stream, 13u);
  EXPECT_EQ(g.device, 1);
  EXPECT_EQ(g.graph_node_id, 77u);
  EXPECT_EQ(strings_.text(g.name_id), "_Z6kernelv");
  EXPECT_EQ(records[1].gpu_kernel.name_id, g.name_id) << "the name is interned once";
}

TEST_F(ActivityTest, CopyRecordsSayWhatMemoryBothEndsWere) {
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  m.bytes = 4096;
  m.start = 10;
  m.end = 20;
  m.correlationId = 5;
  m.streamId = 7;
  m.graphNodeId = 3;
  convert_activity(ctx_, reinterpret_cast<const CUpti_Activity&>(m));
  CUpti_ActivityMemcpyPtoP4 p{};
  p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p.srcDeviceId = 0;
  p.dstDeviceId = 1;
  p.correlationId = 6;
  convert_activity(ctx_, reinterpret_cast<const CUpti_Activity&>(p));
  std::vector<Record> records = drained();
  ASSERT_EQ(records.size(), 2u);
  const GpuMemcpyRecord& g = records[0].gpu_memcpy;
  EXPECT_EQ(g.kind, CopyKind::HtoD);
  EXPECT_EQ(g.src_memory, MemoryKind::Pageable);
  EXPECT_EQ(g.dst_memory, MemoryKind::Device);
  EXPECT_TRUE(g.is_async);
  EXPECT_EQ(g.bytes, 4096u);
  EXPECT_EQ(g.graph_node_id, 3u);
  EXPECT_EQ(g.src_device, -1);
  EXPECT_EQ(records[1].gpu_memcpy.kind, CopyKind::PtoP);
  EXPECT_EQ(records[1].gpu_memcpy.src_device, 0);
  EXPECT_EQ(records[1].gpu_memcpy.dst_device, 1);
}

TEST_F(ActivityTest, MemsetRecordsKeepTheirValueAndMemory) {
  CUpti_ActivityMemset4 s{};
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.value = 0xab;
  s.bytes = 64;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  s.correlationId = 9;
  convert_activity(ctx_, reinterpret_cast<const CUpti_Activity&>(s));
  std::vector<Record> records = drained();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].gpu_memset.value, 0xabu);
  EXPECT_EQ(records[0].gpu_memset.memory, MemoryKind::Device);
}

TEST_F(ActivityTest, StreamRecordsSayHowTheStreamOrdersWithTheLegacyStream) {
  CUpti_ActivityStream s{};
  s.kind = CUPTI_ACTIVITY_KIND_STREAM;
  s.streamId = 13;
  s.contextId = 1;
  s.priority = 2;
  s.correlationId = 5;
  s.flag = CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING;
  convert_activity(ctx_, reinterpret_cast<const CUpti_Activity&>(s));
  s.streamId = 7;
  s.correlationId = 0;
  s.flag = CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL;
  convert_activity(ctx_, reinterpret_cast<const CUpti_Activity&>(s));
  s.flag = static_cast<CUpti_ActivityStreamFlag>(9);
  convert_activity(ctx_, reinterpret_cast<const CUpti_Activity&>(s));
  std::vector<Record> records = drained();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].type, RecordType::Stream);
  EXPECT_EQ(records[0].correlation_id, 5u);
  EXPECT_EQ(records[0].stream.stream, 13u);
  EXPECT_EQ(records[0].stream.context_id, 1u);
  EXPECT_EQ(records[0].stream.priority, 2u);
  EXPECT_EQ(records[0].stream.kind, StreamKind::NonBlocking);
  EXPECT_EQ(records[1].stream.kind, StreamKind::Legacy);
  EXPECT_EQ(records[2].stream.kind, StreamKind::Unknown);
}

TEST_F(ActivityTest, UnifiedMemoryCountersNameTheSidesTheirKindHas) {
  CUpti_ActivityUnifiedMemoryCounter3 u{};
  u.kind = CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
  u.counterKind = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD;
  u.srcId = CUPTI_UNIFIED_MEMORY_CPU_DEVICE_ID;
  u.dstId = 0;
  u.address = 0x7f0000000000;
  u.value = 1 << 20;
  u.start = 5;
  u.end = 9;
  u.flags = 2;
  convert_activity(ctx_, reinterpret_cast<const CUpti_Activity&>(u));
  u.counterKind = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT;
  convert_activity(ctx_, reinterpret_cast<const CUpti_Activity&>(u));
  std::vector<Record> records = drained();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].um_event.counter_kind, UmCounterKind::BytesHtoD);
  EXPECT_EQ(records[0].um_event.src_device, -1);
  EXPECT_EQ(records[0].um_event.dst_device, 0);
  EXPECT_EQ(records[0].um_event.end_ns, 9u);
  EXPECT_EQ(records[1].um_event.counter_kind, UmCounterKind::CpuPageFault);
  EXPECT_EQ(records[1].um_event.dst_device, -1) << "a CPU fault names no device";
  EXPECT_EQ(records[1].um_event.end_ns, 0u);
}

TEST_F(ActivityTest, KindsWeDoNotRecordAreIgnored) {
  CUpti_ActivityOverhead3 o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  convert_activity(ctx_, reinterpret_cast<const CUpti_Activity&>(o));
  EXPECT_TRUE(drained().empty());
}

}  // namespace
}  // namespace apptracer::testing
