#include "sample_trace.h"

#include "analyzer/dvdg/graph_store.h"

namespace apptracer::testing {

namespace {

int64_t add_allocation(TraceBuilder& builder, AllocKind kind, std::optional<int64_t> device,
                    int64_t bytes, int64_t alloc_ns, std::optional<int64_t> free_ns) {
  AllocationRow row;
  row.kind = kind;
  row.device = device;
  row.address = 0x1000 + alloc_ns;
  row.bytes = bytes;
  row.alloc_ns = alloc_ns;
  row.free_ns = free_ns;
  return builder.add(row);
}

}  // namespace

SampleIds build_sample_trace(TraceBuilder& builder) {
  SampleIds ids;
  builder.set_meta("pid", "4242");
  builder.set_meta("command_line", "/opt/app/vector_add --n 1000");
  builder.add_thread(100, "main");
  builder.add_thread(101, "worker");
  builder.add_device(DeviceRow{});

  builder.add_call(1, "cudaMalloc", 100, 1000, 1500);
  builder.add_call(2, "cudaMalloc", 100, 1600, 1900);
  builder.add_call(3, "cudaMemcpy", 100, 2000, 3000);
  builder.add_call(4, "cudaLaunchKernel", 100, 3100, 3200);
  builder.add_call(5, "cudaLaunchKernel", 101, 3150, 3250);
  // Launch 6's driver call is folded into its row, as the tracer records it;
  // launch 4's has a row of its own, as older traces have it.
  builder.add_call(6, "cudaLaunchKernel", 100, 3500, 3600, "cuLaunchKernel");
  builder.add_call(7, "cudaMemsetAsync", 100, 3700, 3750);
  builder.add_call(8, "cudaDeviceSynchronize", 100, 3800, 4600);
  builder.add_call(9, "cudaMemcpy", 100, 4700, 5200);
  ApiCallRow driver_launch;
  driver_launch.correlation_id = 10;
  driver_launch.parent_correlation_id = 4;
  driver_launch.domain = ApiDomain::Driver;
  driver_launch.name = "cuLaunchKernel";
  driver_launch.tid = 100;
  driver_launch.start_ns = 3120;
  driver_launch.end_ns = 3180;
  builder.add(driver_launch);
  builder.add_call(11, "cudaFree", 100, 5300, 5400);
  builder.add_call(12, "cudaStreamSynchronize", 101, 3300, 3800);

  int64_t input = add_allocation(builder, AllocKind::Device, 0, 1000, 1500, 5400);
  int64_t output = add_allocation(builder, AllocKind::Device, 0, 3000, 1900, std::nullopt);
  add_allocation(builder, AllocKind::Device, 0, 2000, 5400, 6000);
  add_allocation(builder, AllocKind::Managed, 0, 4000, 2000, 3000);
  add_allocation(builder, AllocKind::PinnedHost, std::nullopt, 500, 100, 200);
  add_allocation(builder, AllocKind::PageableHost, std::nullopt, 700, 150, std::nullopt);
  add_allocation(builder, AllocKind::RegisteredHost, std::nullopt, 700, 160, std::nullopt);

  MemcpyRow htod;
  htod.call_correlation_id = 3;
  htod.kind = CopyKind::HtoD;
  htod.bytes = 5000;
  htod.src_memory = MemoryKind::Pageable;
  htod.dst_memory = MemoryKind::Device;
  htod.src_address = 0x70000;
  htod.dst_address = 0x1000 + 1500;  // the input allocation
  htod.dst_alloc_id = input;
  htod.stream = 7;
  htod.api_start_ns = 2000;
  htod.gpu_start_ns = 2100;
  htod.gpu_end_ns = 2600;
  ids.copy_htod = builder.add(htod);
  MemcpyRow dtoh = htod;
  dtoh.call_correlation_id = 9;
  dtoh.kind = CopyKind::DtoH;
  dtoh.bytes = 4000;
  dtoh.dst_alloc_id.reset();
  dtoh.src_alloc_id = output;
  dtoh.src_address = 0x1000 + 1900;  // the output allocation
  dtoh.dst_address = 0x80000;
  dtoh.src_memory = MemoryKind::Device;
  dtoh.dst_memory = MemoryKind::Pageable;
  dtoh.api_start_ns = 4700;
  dtoh.gpu_start_ns = 4800;
  dtoh.gpu_end_ns = 5000;
  ids.copy_dtoh = builder.add(dtoh);
  MemcpyRow lost_copy = htod;  // its activity record was lost: no GPU times
  lost_copy.call_correlation_id.reset();
  lost_copy.dst_alloc_id.reset();
  lost_copy.bytes = 8000;
  lost_copy.src_memory = MemoryKind::Pinned;
  lost_copy.is_async = true;
  lost_copy.api_start_ns = 5500;
  lost_copy.gpu_start_ns.reset();
  lost_copy.gpu_end_ns.reset();
  builder.add(lost_copy);

  KernelRow vec_add;
  vec_add.call_correlation_id = 4;
  vec_add.mangled_name = "_Z7vec_addPfS_";
  vec_add.demangled_name = "vec_add(float*, float*)";
  vec_add.stream = 7;
  vec_add.grid_x = 4;
  vec_add.block_x = 256;
  vec_add.api_start_ns = 3100;
  vec_add.gpu_start_ns = 3300;
  vec_add.gpu_end_ns = 4300;
  ids.kernel_main = builder.add(vec_add);
  KernelRow vec_add_worker = vec_add;
  vec_add_worker.call_correlation_id = 5;
  vec_add_worker.stream = 8;
  vec_add_worker.gpu_start_ns = 3400;
  vec_add_worker.gpu_end_ns = 3700;
  builder.add(vec_add_worker);
  KernelRow lost_kernel;  // no demangled name and no GPU times
  lost_kernel.call_correlation_id = 6;
  lost_kernel.mangled_name = "_Z5scalePf";
  lost_kernel.demangled_name.reset();
  lost_kernel.stream = 7;
  builder.add(lost_kernel);
  KernelRow overlap;  // two records overlapping on one stream (clock skew)
  overlap.mangled_name = "_Z7overlapv";
  overlap.demangled_name = "overlap()";
  overlap.stream = 9;
  overlap.gpu_start_ns = 100;
  overlap.gpu_end_ns = 300;
  builder.add(overlap);
  overlap.gpu_start_ns = 200;
  overlap.gpu_end_ns = 400;
  builder.add(overlap);

  MemsetRow memset;
  memset.call_correlation_id = 7;
  memset.bytes = 4096;
  memset.stream = 7;
  memset.gpu_start_ns = 4400;
  memset.gpu_end_ns = 4500;
  builder.add(memset);
  memset.call_correlation_id.reset();
  memset.bytes = 904;
  memset.stream = 8;
  memset.gpu_start_ns = 6000;
  memset.gpu_end_ns = 6100;
  builder.add(memset);

  SyncRow sync;
  sync.call_correlation_id = 8;
  sync.kind = SyncKind::Device;
  sync.start_ns = 3800;
  sync.end_ns = 4600;
  builder.add(sync);
  sync.call_correlation_id = 12;
  sync.kind = SyncKind::Stream;
  sync.tid = 101;
  sync.stream = 8;
  sync.start_ns = 3300;
  sync.end_ns = 3800;
  builder.add(sync);
  sync.call_correlation_id.reset();
  sync.kind = SyncKind::Event;
  sync.start_ns = 6200;
  sync.end_ns = 6500;
  builder.add(sync);
  sync.kind = SyncKind::Device;
  sync.start_ns = 7000;
  sync.end_ns = 7100;
  builder.add(sync);

  KernelArgRow arg;
  arg.kernel_id = ids.kernel_main;
  arg.alloc_id = input;
  arg.access = AccessKind::Read;
  arg.access_source = AccessSource::ConstSignature;
  builder.add(arg);
  arg.param_index = 1;
  arg.offset = 8;
  arg.alloc_id = output;
  arg.access = AccessKind::ReadWrite;
  arg.access_source = AccessSource::Assumed;
  builder.add(arg);
  arg.param_index = 2;  // a second pointer into the same output buffer
  arg.offset = 16;
  arg.alloc_offset = 64;
  builder.add(arg);

  NvtxRangeRow range;
  range.name = "epoch";
  range.tid = 100;
  range.start_ns = 900;
  range.end_ns = 5500;
  builder.add(range);
  range.name = "forward";
  range.depth = 1;
  range.start_ns = 3000;
  range.end_ns = 4000;
  builder.add(range);
  range.name = "unclosed";
  range.tid = 101;
  range.depth = 0;
  range.start_ns = 3100;
  range.end_ns.reset();
  builder.add(range);
  return ids;
}

void add_sample_dvdg(Database& db, const SampleIds& ids) {
  db.exec(dvdg::dvdg_tables_sql());
  Statement op = db.prepare(
      "INSERT INTO dvdg_ops(id, kind, source_id, issue_ns, start_ns, end_ns, reads_uninitialized, "
      "arguments_unknown) VALUES (?, ?, ?, 0, ?, 0, 0, 0)");
  op.bind(1, int64_t{1}).bind(2, std::string("copy")).bind(3, ids.copy_htod).bind(4, int64_t{2100}).run();
  op.bind(1, int64_t{2}).bind(2, std::string("kernel")).bind(3, ids.kernel_main).bind(4, int64_t{3300}).run();
  op.bind(1, int64_t{3}).bind(2, std::string("copy")).bind(3, ids.copy_dtoh).bind(4, int64_t{4800}).run();
  Statement value = db.prepare(
      "INSERT INTO dvdg_values(id, address, bytes, memory, version, producer_op_id, holds_data, "
      "read_uninitialized, region_offset, exchanged) VALUES (?, 0, 0, 3, ?, ?, 1, 0, 0, 0)");
  for (int64_t id = 1; id <= 3; ++id) value.bind(1, id).bind(2, id).bind(3, id).run();
  // The kernel read value 1 and wrote value 2: its data edge.
  db.exec("INSERT INTO dvdg_op_values VALUES (2, 1, 0, 0, 0), (2, 2, 1, 0, 0)");
  Statement edge = db.prepare(
      "INSERT INTO dvdg_listed_edges(src_value_id, dst_value_id, op_id, kind, uninitialized_read) "
      "VALUES (?, ?, ?, ?, 0)");
  edge.bind(1, int64_t{2}).bind(2, int64_t{3}).bind(3, int64_t{3}).bind(4, std::string("data")).run();
  edge.bind(1, int64_t{1}).bind(2, int64_t{3}).bind(3, int64_t{3}).bind(4, std::string("carry")).run();
}

}  // namespace apptracer::testing
