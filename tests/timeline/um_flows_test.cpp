// Timeline flows reach through unified-memory migrations: a kernel that
// reads managed data another kernel wrote is drawn as its consumer even when
// the data went to the host and back in between.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "analyzer/timeline/dvdg_flows.h"
#include "scratch_dir.h"
#include "trace_builder.h"
#include "analyzer/trace/unified_memory.h"

namespace apptracer::testing {
namespace {

TEST(UmFlows, AFlowFollowsTheDataThroughItsMigrations) {
  ScratchDir scratch;
  std::string path = scratch / "um_flows.db";
  int64_t produce = 0, consume = 0;
  {
    TraceBuilder builder(path);
    AllocationRow managed;
    managed.kind = AllocKind::Managed;
    managed.address = 0x7e0000000000;
    managed.bytes = 4096;
    int64_t m = builder.add(managed);
    AllocationRow device;
    device.address = 0x7f0000000000;
    device.bytes = 4096;
    int64_t out = builder.add(device);
    auto kernel = [&](const char* name, int64_t gpu_start, int64_t alloc, AccessKind access) {
      KernelRow row;
      row.demangled_name = name;
      row.stream = 7;
      row.api_start_ns = gpu_start - 50;
      row.gpu_start_ns = gpu_start;
      row.gpu_end_ns = gpu_start + 100;
      int64_t id = builder.add(row);
      KernelArgRow arg;
      arg.kernel_id = id;
      arg.alloc_id = alloc;
      arg.access = access;
      arg.access_source = AccessSource::Sanitizer;
      builder.add(arg);
      return id;
    };
    auto migrate = [&](UmCounterKind kind, int64_t ns) {
      UmEventRow row;
      row.counter_kind = kind;
      row.address = managed.address;
      row.alloc_id = m;
      row.bytes = row.value = 4096;
      (kind == UmCounterKind::BytesHtoD ? row.dst_device : row.src_device) = 0;
      row.start_ns = ns;
      row.end_ns = ns + 10;
      row.cause = static_cast<int64_t>(UmMigrationCause::Coherence);
      builder.add(row);
    };
    produce = kernel("produce", 100, m, AccessKind::Write);
    migrate(UmCounterKind::BytesDtoH, 500);  // the host reads it
    consume = kernel("consume", 1000, m, AccessKind::Read);
    migrate(UmCounterKind::BytesHtoD, 1010);
    KernelArgRow out_arg;
    out_arg.kernel_id = consume;
    out_arg.param_index = 1;
    out_arg.alloc_id = out;
    out_arg.access = AccessKind::Write;
    out_arg.access_source = AccessSource::Sanitizer;
    builder.add(out_arg);
  }
  std::string command = std::string(APPTRACER_BIN) + " dvdg " + path + " >/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::vector<DvdgFlow> flows;
  {
    trace::Trace trace(path, TraceAccess::ReadOnly);
    flows = read_dvdg_flows(trace);
  }
  ASSERT_EQ(flows.size(), 1u);
  EXPECT_EQ(flows[0].from_kind, GpuOp::Kernel);
  EXPECT_EQ(flows[0].from_id, produce);
  EXPECT_EQ(flows[0].to_kind, GpuOp::Kernel);
  EXPECT_EQ(flows[0].to_id, consume);
}

}  // namespace
}  // namespace apptracer::testing
