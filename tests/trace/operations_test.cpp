// The one vocabulary of operations: what each row is, the one convention for
// its times, and the GPU a copy belongs to.
#include <gtest/gtest.h>

#include "analyzer/trace/operations.h"

namespace apptracer::trace {
namespace {

TEST(Operations, AreIssuedAtTheirCallAndNeverRunBeforeIt) {
  Operation op;
  set_times(op, 1000, 1500, 1700);
  EXPECT_EQ(op.issue_ns, 1000);
  EXPECT_EQ(op.start_ns, 1500);
  EXPECT_EQ(op.end_ns, 1700);
  // A GPU start before the call that asked for it is clock skew.
  set_times(op, 1000, 900, 1200);
  EXPECT_EQ(op.start_ns, 1000);
  EXPECT_EQ(op.end_ns, 1200);
  // No GPU times: it happened when it was issued.
  set_times(op, 1000, {}, {});
  EXPECT_EQ(op.start_ns, 1000);
  EXPECT_EQ(op.end_ns, 1000);
  // No call: issued when it started.
  set_times(op, {}, 2000, 1900);
  EXPECT_EQ(op.issue_ns, 2000);
  EXPECT_EQ(op.end_ns, 2000);
}

TEST(Operations, ACopyBelongsToTheGpuWhoseMemoryItTouchesTheDestinationsFirst) {
  Packed<MemcpyRow> copy;
  copy.kind = CopyKind::HtoD;
  copy.src_memory = MemoryKind::Pinned;
  copy.dst_memory = MemoryKind::Device;
  copy.dst_device = 1;
  EXPECT_EQ(copy_device(copy), 1);
  copy.kind = CopyKind::DtoH;
  copy.src_memory = MemoryKind::Device;
  copy.src_device = 0;
  copy.dst_memory = MemoryKind::Pageable;
  copy.dst_device = {};
  EXPECT_EQ(copy_device(copy), 0);
  copy.kind = CopyKind::DtoD;
  copy.dst_memory = MemoryKind::Managed;
  copy.dst_device = 2;
  EXPECT_EQ(copy_device(copy), 2);
}

TEST(Operations, EachRowIsTheOperationItsTableAndKindSay) {
  Packed<MemcpyRow> prefetch;
  prefetch.id = 4;
  prefetch.kind = CopyKind::Prefetch;
  prefetch.bytes = 4096;
  Operation op = operation_of(prefetch);
  EXPECT_EQ(op.kind, OpKind::Prefetch);
  EXPECT_EQ(op.source_id, 4);
  EXPECT_EQ(op.bytes, 4096);

  Packed<KernelRow> kernel;
  kernel.name_id = 7;
  EXPECT_EQ(operation_of(kernel).name_id, 7);
  kernel.demangled_id = 8;
  EXPECT_EQ(operation_of(kernel).name_id, 8);

  Packed<StreamEventRow> wait;
  wait.kind = StreamEventKind::Wait;
  wait.ns = 50;
  EXPECT_EQ(operation_of(wait).kind, OpKind::EventWait);
  EXPECT_EQ(operation_of(wait).start_ns, 50);
  EXPECT_EQ(to_string(OpKind::HostPhase), "host phase");
  EXPECT_TRUE(is_lifetime_op(OpKind::Free));
  EXPECT_FALSE(is_lifetime_op(OpKind::Copy));
}

}  // namespace
}  // namespace apptracer::trace
