// Synthetic trace databases for tests: a trace with exactly the rows a test
// needs, written through the real schema (tables.def), so tests exercise the
// same contract the tracer writes.
//
// The row types are the generated ones (tables.h) with defaults a test can
// rely on (a device copy, a kernel named kernel(), ...); a test sets the
// fields it cares about and adds the row. Names are interned into `strings`
// by the builder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "apptracer/row_inserter.h"

namespace apptracer::testing {

struct ApiCallRow : apptracer::ApiCallRow {
  std::string name = "cudaFree";  // interned into name_id
  std::string driver_name;        // interned into driver_name_id when not empty
  ApiCallRow() {
    domain = ApiDomain::Runtime;
    tid = 1;
  }
};

struct AllocationRow : apptracer::AllocationRow {
  AllocationRow() {
    kind = AllocKind::Device;
    device = 0;
  }
};

// A block of a framework allocator (by default a PyTorch tensor on device 0).
struct SubAllocationRow : apptracer::SubAllocationRow {
  SubAllocationRow() {
    allocator = SubAllocator::PytorchCaching;
    device = 0;
    stream_handle = 0;
    alloc_tid = 1;
  }
};

struct MemcpyRow : apptracer::MemcpyRow {
  MemcpyRow() {
    kind = CopyKind::HtoD;
    src_memory = MemoryKind::Pageable;
    dst_memory = MemoryKind::Device;
    dst_device = 0;
  }
};

struct MemsetRow : apptracer::MemsetRow {
  MemsetRow() {
    memory = MemoryKind::Device;
    device = 0;
    element_size = 1;
  }
};

struct KernelRow : apptracer::KernelRow {
  std::string mangled_name = "_Z6kernelv";                              // into name_id
  std::optional<std::string> demangled_name = std::string("kernel()");  // into demangled_id
  KernelRow() {
    launch_kind = LaunchKind::Driver;
    device = 0;
    grid_x = grid_y = grid_z = 1;
    block_x = block_y = block_z = 1;
  }
};

// A parameter word of one launch: the builder gives each kernel its own
// argument set (kernel_arg_sets) and adds the word to it.
struct KernelArgRow : apptracer::KernelArgWordRow {
  int64_t kernel_id = 0;
  KernelArgRow() {
    param_index = 0;
    size = 8;
  }
};

struct SyncRow : apptracer::SyncRow {
  SyncRow() {
    kind = SyncKind::Device;
    tid = 1;
  }
};

struct StreamEventRow : apptracer::StreamEventRow {
  StreamEventRow() {
    kind = StreamEventKind::Record;
    device = 0;
  }
};

struct NvtxRangeRow : apptracer::NvtxRangeRow {
  std::string name = "range";  // into name_id
  NvtxRangeRow() {
    tid = 1;
    depth = 0;
  }
};

// A framework range (by default an op on thread 1, outermost).
struct FrameworkRangeRow : apptracer::FrameworkRangeRow {
  std::string name = "aten::add_";  // into name_id
  FrameworkRangeRow() {
    kind = FrameworkRangeKind::Op;
    tid = 1;
    depth = 0;
  }
};

// A unified-memory counter record. Devices: std::nullopt is the host.
struct UmEventRow : apptracer::UmEventRow {
  UmEventRow() {
    counter_kind = UmCounterKind::BytesHtoD;
    flags = 0;
  }
};

struct MemAdviceRow : apptracer::MemAdviceRow {
  MemAdviceRow() {
    advice = MemAdvice::SetPreferredLocation;
    tid = 1;
  }
};

struct DeviceRow : apptracer::DeviceRow {
  DeviceRow() {
    id = 0;
    name = "NVIDIA H100";
    uuid = "GPU-00000000";
    total_memory_bytes = int64_t{80} << 30;
    sm_count = 132;
  }
};

class TraceBuilder {
 public:
  // Creates a fresh trace at `path` (":memory:" for an in-memory one) with
  // the full schema and meta status "complete".
  explicit TraceBuilder(const std::string& path = ":memory:");

  Database& db() { return db_; }

  int64_t string_id(const std::string& text);
  void set_meta(const std::string& key, const std::string& value);
  void add_thread(int64_t tid, const std::string& name);
  void add_device(const DeviceRow& row) { add_row(static_cast<const apptracer::DeviceRow&>(row)); }

  // Each add returns the new row's id.
  int64_t add(const ApiCallRow& row);
  int64_t add(const KernelRow& row);
  int64_t add(const NvtxRangeRow& row);
  int64_t add(const FrameworkRangeRow& row);
  // A framework range of `kind` named `name`, outermost, on thread 1.
  int64_t add_framework_range(FrameworkRangeKind kind, const std::string& name, int64_t start_ns,
                              int64_t end_ns);
  void add(const KernelArgRow& row);
  // A stretch of the tracer's own time at `site`: `timed_calls` calls timed,
  // `timed_ns` together, about one in `sample_every`.
  int64_t add_tracer_time(int64_t start_ns, int64_t end_ns, TracerSite site, int64_t timed_calls,
                          int64_t timed_ns, int64_t sample_every);
  // An API call of thread `tid`; `driver_name`: the driver call a runtime
  // call made, where the trace names it.
  int64_t add_call(int64_t correlation_id, const std::string& name, int64_t tid, int64_t start_ns,
                   int64_t end_ns, const std::string& driver_name = "");
  // A block a framework's allocator (PyTorch's caching allocator) handed out
  // at `offset` inside the allocation `parent`, live from `alloc_ns` (until
  // `free_ns`).
  int64_t add_block(int64_t parent, int64_t offset, int64_t bytes, int64_t alloc_ns,
                    std::optional<int64_t> free_ns = std::nullopt);
  // An exact range [offset, offset + bytes) of the allocation `alloc_id` that
  // launch `launch` (exact_launches.id) touched.
  int64_t add_exact_range(int64_t launch, int64_t alloc_id, int64_t offset, int64_t bytes, AccessKind access);
  // Every other table: the row as it is.
  template <typename Row>
  int64_t add(const Row& row) {
    return add_row(row);
  }

 private:
  // The address of allocation `alloc_id` (allocations.id); throws when there is none.
  int64_t allocation_address(int64_t alloc_id);

  template <typename Row>
  int64_t add_row(const Row& row) {
    using Table = typename Row::Table;
    return RowInserter<Table>(db_).insert(static_cast<const Table&>(row));
  }

  Database db_;
};

}  // namespace apptracer::testing
