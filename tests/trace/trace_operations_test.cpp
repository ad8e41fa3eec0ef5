// The operations model (analyzer/trace/trace_operations.h): views of the
// model's rows, never copies; the calls that issued work, found by
// correlation id; synchronizations and calls in time order; the ends of
// copies and memsets; when the trace ran.
#include <gtest/gtest.h>

#include "analyzer/trace/trace.h"
#include "trace_builder.h"

namespace apptracer::trace {
namespace {

TEST(TraceOperations, AreViewsOfTheModelsRows) {
  testing::TraceBuilder builder;
  testing::MemcpyRow copy;
  copy.bytes = 64;
  builder.add(copy);
  testing::MemsetRow memset;
  memset.bytes = 32;
  builder.add(memset);
  builder.add(testing::KernelRow());
  testing::AllocationRow allocation;
  allocation.bytes = 4096;
  builder.add(allocation);
  Trace trace(builder.db());
  const TraceOperations& ops = trace.operations();
  ASSERT_EQ(ops.copies().size(), 1u);
  EXPECT_EQ(ops.copies()[0].copy_row(), &trace.rows<MemcpyRow>()[0]);
  EXPECT_EQ(ops.memsets()[0].memset_row(), &trace.rows<MemsetRow>()[0]);
  EXPECT_EQ(ops.kernels()[0].row, &trace.rows<KernelRow>()[0]);
  EXPECT_EQ(ops.kernels()[0].name, "kernel()");
  EXPECT_EQ(ops.allocation(1)->bytes(), 4096);
  EXPECT_EQ(&trace.operations(), &ops);  // made once
  // A view is a pointer or two, whatever the row holds.
  EXPECT_LE(sizeof(Transfer), 2 * sizeof(void*));
  EXPECT_LE(sizeof(Sync), sizeof(void*));
  EXPECT_LE(sizeof(Allocation), sizeof(void*));
}

TEST(TraceOperations, ACallIsTheRuntimeOneWhereADriverCallSharesItsCorrelation) {
  testing::TraceBuilder builder;
  testing::ApiCallRow driver;
  driver.domain = ApiDomain::Driver;
  driver.name = "cuMemcpyHtoD_v2";
  driver.correlation_id = 7;
  driver.start_ns = 110;
  driver.end_ns = 190;
  builder.add(driver);
  testing::ApiCallRow runtime;
  runtime.name = "cudaMemcpy";
  runtime.correlation_id = 7;
  runtime.start_ns = 100;
  runtime.end_ns = 200;
  builder.add(runtime);
  testing::ApiCallRow inner = driver;  // made by the runtime call: not a call of its own
  inner.name = "cuLaunchKernel";
  inner.correlation_id = 8;
  inner.parent_correlation_id = 7;
  builder.add(inner);
  testing::ApiCallRow later = runtime;
  later.name = "cudaFree";
  later.correlation_id = 9;
  later.start_ns = 300;
  later.end_ns = 310;
  builder.add(later);
  Trace trace(builder.db());
  const TraceOperations& ops = trace.operations();
  ASSERT_EQ(ops.calls().size(), 3u);  // by start
  EXPECT_EQ(ops.calls()[0].name, "cudaMemcpy");
  EXPECT_EQ(ops.calls()[1].name, "cuMemcpyHtoD_v2");
  EXPECT_EQ(ops.call(7)->name, "cudaMemcpy");
  EXPECT_EQ(ops.call(8), nullptr);
  EXPECT_EQ(ops.call({}), nullptr);
  EXPECT_EQ(ops.next_call_on_thread(*ops.call(7))->name, "cuMemcpyHtoD_v2");
  EXPECT_EQ(ops.next_call_on_thread(*ops.call(9)), nullptr);
  EXPECT_EQ(ops.call_site(9), "cudaFree (thread 1)");
}

TEST(TraceOperations, SynchronizationsAreInTimeOrder) {
  testing::TraceBuilder builder;
  for (int64_t start : {500, 100, 300}) {
    testing::SyncRow sync;
    sync.start_ns = start;
    sync.end_ns = start + 10;
    builder.add(sync);
  }
  Trace trace(builder.db());
  const std::vector<Sync>& syncs = trace.operations().syncs();
  ASSERT_EQ(syncs.size(), 3u);
  EXPECT_EQ(syncs[0].id(), 2);
  EXPECT_EQ(syncs[1].id(), 3);
  EXPECT_EQ(syncs[2].id(), 1);
}

// Calls are by start, then id, across threads: three threads' calls
// interleaved, one thread's recorded out of order, two starting together;
// each thread's next call follows from that order.
TEST(TraceOperations, CallsAreInStartOrderAcrossThreads) {
  testing::TraceBuilder builder;
  const std::vector<std::pair<int64_t, int64_t>> calls = {  // (tid, start), by id
      {1, 100}, {2, 150}, {1, 300}, {3, 120}, {2, 250}, {1, 200}, {3, 400}, {2, 300}, {3, 130}};
  for (const auto& [tid, start] : calls) {
    testing::ApiCallRow call;
    call.tid = tid;
    call.start_ns = start;
    call.end_ns = start + 5;
    builder.add(call);
  }
  Trace trace(builder.db());
  const TraceOperations& ops = trace.operations();
  std::vector<int64_t> ids;
  for (const HostCall& call : ops.calls()) ids.push_back(call.id());
  EXPECT_EQ(ids, (std::vector<int64_t>{1, 4, 9, 2, 6, 5, 3, 8, 7}));
  const HostCall& first_of_thread_1 = ops.calls()[0];
  ASSERT_NE(ops.next_call_on_thread(first_of_thread_1), nullptr);
  EXPECT_EQ(ops.next_call_on_thread(first_of_thread_1)->id(), 6) << "recorded after id 3, made before it";
}

TEST(TraceOperations, ACopysEndsSpanItsRowsAtTheirPitchAndAMemsetReadsNothingElse) {
  testing::TraceBuilder builder;
  testing::MemcpyRow copy;
  copy.bytes = 3 * 100;  // 3 rows of 100 bytes
  copy.width = 100;
  copy.height = 3;
  copy.src_pitch = 256;
  copy.dst_pitch = 128;
  copy.src_address = 0x1000;
  copy.dst_address = 0x9000;
  builder.add(copy);
  testing::MemsetRow memset;
  memset.bytes = 64;
  memset.address = 0x9000;
  builder.add(memset);
  Trace trace(builder.db());
  const Transfer& copied = trace.operations().copies()[0];
  EXPECT_FALSE(copied.linear());
  EXPECT_EQ(copied.source().span, 2 * 256 + 100);
  EXPECT_EQ(copied.destination().span, 2 * 128 + 100);
  EXPECT_EQ(copied.source().address, 0x1000);
  EXPECT_EQ(copied.destination().memory, MemoryKind::Device);
  const Transfer& set = trace.operations().memsets()[0];
  EXPECT_TRUE(set.is_memset());
  EXPECT_TRUE(set.linear());
  EXPECT_EQ(set.destination().span, 64);
  EXPECT_EQ(set.source().address, set.destination().address);
  EXPECT_EQ(set.operation().kind, OpKind::Memset);
}

TEST(TraceOperations, TheSpanIsTheFirstAndLastTimestampOfItsWorkAndCalls) {
  testing::TraceBuilder builder;
  testing::ApiCallRow call;
  call.start_ns = 100;
  call.end_ns = 150;
  builder.add(call);
  testing::KernelRow kernel;
  kernel.gpu_start_ns = 160;
  kernel.gpu_end_ns = 900;
  builder.add(kernel);
  testing::SyncRow sync;
  sync.start_ns = 200;
  sync.end_ns = 950;
  builder.add(sync);
  Trace trace(builder.db());
  const TraceSpan& span = trace.operations().span();
  EXPECT_EQ(span.start_ns, 100);
  EXPECT_EQ(span.end_ns, 950);
  EXPECT_EQ(span.processes.at(kSingleProcess), std::make_pair(int64_t{100}, int64_t{950}));
}

}  // namespace
}  // namespace apptracer::trace
