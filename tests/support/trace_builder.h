// Synthetic trace databases for tests: a trace with exactly the rows a test
// needs, written through the real schema (common/src/schema.cpp), so tests
// exercise the same contract the tracer writes.
//
// Each row type is a struct whose fields default to something valid; a test
// sets the fields it cares about and adds the row. Names are interned into
// `strings` by the builder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "apptracer/enums.h"
#include "apptracer/sqlite.h"

namespace apptracer::testing {

struct ApiCallRow {
  int64_t correlation_id = 0;
  std::optional<int64_t> parent_correlation_id;
  ApiDomain domain = ApiDomain::Runtime;
  int64_t cbid = 0;
  std::string name = "cudaFree";
  int64_t tid = 1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t return_code = 0;
  std::optional<int64_t> device;
  std::optional<int64_t> stream;
};

struct AllocationRow {
  AllocKind kind = AllocKind::Device;
  int64_t address = 0;
  int64_t bytes = 0;
  std::optional<int64_t> device = 0;
  int64_t alloc_ns = 0;
  std::optional<int64_t> free_ns;
  std::optional<int64_t> alloc_correlation_id;
  std::optional<int64_t> free_correlation_id;
  std::optional<int64_t> alloc_tid;
};

struct MemcpyRow {
  std::optional<int64_t> call_correlation_id;
  CopyKind kind = CopyKind::HtoD;
  int64_t bytes = 0;
  std::optional<int64_t> src_address;
  std::optional<int64_t> dst_address;
  std::optional<int64_t> src_alloc_id;
  std::optional<int64_t> dst_alloc_id;
  std::optional<int64_t> src_offset;
  std::optional<int64_t> dst_offset;
  MemoryKind src_memory = MemoryKind::Pageable;
  MemoryKind dst_memory = MemoryKind::Device;
  std::optional<int64_t> src_device;
  std::optional<int64_t> dst_device = 0;
  std::optional<int64_t> stream;
  bool is_async = false;
  std::optional<int64_t> api_start_ns;
  std::optional<int64_t> gpu_start_ns;
  std::optional<int64_t> gpu_end_ns;
};

struct MemsetRow {
  std::optional<int64_t> call_correlation_id;
  std::optional<int64_t> address;
  int64_t bytes = 0;
  int64_t value = 0;
  std::optional<int64_t> alloc_id;
  std::optional<int64_t> alloc_offset;
  MemoryKind memory = MemoryKind::Device;
  std::optional<int64_t> device = 0;
  std::optional<int64_t> stream;
  bool is_async = false;
  std::optional<int64_t> api_start_ns;
  std::optional<int64_t> gpu_start_ns;
  std::optional<int64_t> gpu_end_ns;
};

struct KernelRow {
  std::optional<int64_t> call_correlation_id;
  std::string mangled_name = "_Z6kernelv";
  std::optional<std::string> demangled_name = std::string("kernel()");
  LaunchKind launch_kind = LaunchKind::Driver;
  std::optional<int64_t> device = 0;
  std::optional<int64_t> stream;
  int64_t grid_x = 1, grid_y = 1, grid_z = 1;
  int64_t block_x = 1, block_y = 1, block_z = 1;
  std::optional<int64_t> api_start_ns;
  std::optional<int64_t> gpu_start_ns;
  std::optional<int64_t> gpu_end_ns;
};

struct KernelArgRow {
  int64_t kernel_id = 0;
  int64_t param_index = 0;
  int64_t offset = 0;
  int64_t size = 8;
  std::optional<int64_t> raw_value;
  std::optional<int64_t> alloc_id;
  std::optional<int64_t> alloc_offset;
  AccessKind access = AccessKind::Unknown;
  AccessSource access_source = AccessSource::None;
};

struct SyncRow {
  std::optional<int64_t> call_correlation_id;
  SyncKind kind = SyncKind::Device;
  std::optional<int64_t> device;
  std::optional<int64_t> stream;
  std::optional<int64_t> event_handle;
  std::optional<int64_t> tid = 1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct StreamEventRow {
  std::optional<int64_t> call_correlation_id;
  StreamEventKind kind = StreamEventKind::Record;
  int64_t event_handle = 0;
  std::optional<int64_t> stream;
  std::optional<int64_t> device = 0;
  int64_t ns = 0;
};

struct NvtxRangeRow {
  std::string name = "range";
  int64_t tid = 1;
  std::optional<int64_t> depth = 0;
  int64_t start_ns = 0;
  std::optional<int64_t> end_ns;
};

// A unified-memory counter record (um_events). Devices: std::nullopt is the host.
struct UmEventRow {
  UmCounterKind counter_kind = UmCounterKind::BytesHtoD;
  std::optional<int64_t> address;
  std::optional<int64_t> bytes;
  std::optional<int64_t> alloc_id;
  std::optional<int64_t> alloc_offset;
  std::optional<int64_t> src_device;
  std::optional<int64_t> dst_device;
  std::optional<int64_t> start_ns;
  std::optional<int64_t> end_ns;
  std::optional<int64_t> value;
  std::optional<int64_t> cause;  // um_migration_cause, um_access_type or um_remote_map_cause
  int64_t flags = 0;
};

struct MemAdviceRow {
  std::optional<int64_t> call_correlation_id;
  MemAdvice advice = MemAdvice::SetPreferredLocation;
  std::optional<int64_t> address;
  std::optional<int64_t> bytes;
  std::optional<int64_t> alloc_id;
  std::optional<int64_t> alloc_offset;
  std::optional<MemLocationType> location_type;
  std::optional<int64_t> location_id;
  std::optional<int64_t> stream;
  std::optional<int64_t> tid = 1;
  int64_t ns = 0;
};

struct DeviceRow {
  int64_t id = 0;
  std::string name = "NVIDIA H100";
  std::string uuid = "GPU-00000000";
  int64_t total_memory_bytes = int64_t{80} << 30;
  int64_t sm_count = 132;
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
  void add_device(const DeviceRow& row);
  // Each add returns the new row's id.
  int64_t add(const ApiCallRow& row);
  int64_t add(const AllocationRow& row);
  int64_t add(const MemcpyRow& row);
  int64_t add(const MemsetRow& row);
  int64_t add(const KernelRow& row);
  void add(const KernelArgRow& row);
  int64_t add(const SyncRow& row);
  int64_t add(const StreamEventRow& row);
  int64_t add(const NvtxRangeRow& row);
  int64_t add(const UmEventRow& row);
  int64_t add(const MemAdviceRow& row);

 private:
  Database db_;
};

}  // namespace apptracer::testing
