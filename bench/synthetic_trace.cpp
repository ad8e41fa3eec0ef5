#include "synthetic_trace.h"

#include <algorithm>
#include <deque>
#include <cstdio>
#include <optional>
#include <random>

#include "apptracer/enums.h"
#include "apptracer/schema.h"
#include "apptracer/row_inserter.h"

namespace apptracer::bench {

namespace {

constexpr int64_t kDeviceBuffers = 2000;
constexpr int64_t kHostBuffers = 200;
constexpr int64_t kBufferBytes = 1 << 20;
constexpr int kKernelNames = 40;
constexpr int64_t kStreams[] = {13, 14};
// The API calls behind a launch or a copy, as the tracer records them: the
// runtime call, and the driver call it made folded into its row.
constexpr const char* kApiNames[] = {"cudaLaunchKernel", "cuLaunchKernel", "cudaMemcpyAsync",
                                     "cuMemcpyAsync"};
constexpr int64_t kApiCbids[] = {211, 307, 41, 306};  // CUPTI callback ids of those
constexpr int64_t kRangeNameId = kKernelNames + 5;
constexpr int64_t kDeviceBase = 0x7f0000000000;
constexpr int64_t kHostBase = 0x500000000;
// Sub-allocation mode: the device buffers are tensors in slots of these segments.
constexpr int64_t kSegments = 20;
constexpr int64_t kSlotsPerSegment = kDeviceBuffers / kSegments;
// The foreach pattern's parameter tensors (allocations of their own).
constexpr int64_t kParameterBytes = 1 << 16;
constexpr int64_t kParameterBase = 0x7e0000000000;
constexpr int64_t kForeachNameId = kRangeNameId + 1;

// A device buffer as kernel arguments and copies name it.
struct DevicePlace {
  int64_t alloc_id;
  int64_t offset;
  int64_t address;
};

// The device memory of the trace: 2000 buffers of their own, or 2000 tensor
// slots in 20 segments, where each kernel's output is a new tensor put in
// the slot of the oldest live one, freed just before (as a caching
// allocator reuses a block).
class DeviceMemory {
 public:
  DeviceMemory(Database& db, bool sub_allocations)
      : sub_allocations_(sub_allocations),
        allocations_(sub_allocations ? kSegments : kDeviceBuffers) {
    if (!sub_allocations) return;
    tensors_ = RowInserter<SubAllocationRow>(db);
    free_ = db.prepare("UPDATE sub_allocations SET free_ns = ? WHERE id = ?");
  }

  int64_t allocations() const { return allocations_; }
  int64_t allocation_bytes() const {
    return sub_allocations_ ? kSlotsPerSegment * kBufferBytes : kBufferBytes;
  }
  int64_t allocation_address(int64_t id) const { return kDeviceBase + id * allocation_bytes(); }

  // Slot i (0-based) of the 2000.
  DevicePlace slot(int64_t i) const {
    if (!sub_allocations_) return {i + 1, 0, allocation_address(i + 1)};
    int64_t id = i / kSlotsPerSegment + 1;
    int64_t offset = i % kSlotsPerSegment * kBufferBytes;
    return {id, offset, allocation_address(id) + offset};
  }

  // A buffer to read: any of the 2000 (the live tensors').
  DevicePlace any(std::mt19937_64& random) const {
    return slot(static_cast<int64_t>(random() % kDeviceBuffers));
  }

  // Where a kernel's output goes: a random buffer, or a new tensor.
  DevicePlace output(std::mt19937_64& random, int64_t ns) {
    if (!sub_allocations_) return any(random);
    int64_t reused = oldest_.empty() ? next_slot_++ : free_oldest(ns - 20);
    allocate(reused, ns - 10);
    return slot(reused);
  }

  // Sub-allocation mode: the 2000 tensors live at the start.
  void allocate_initial_tensors() {
    if (!sub_allocations_) return;
    for (int64_t i = 0; i < kDeviceBuffers; ++i) allocate(i, 100 + i);
    next_slot_ = kDeviceBuffers;
  }

 private:
  void allocate(int64_t slot_index, int64_t ns) {
    DevicePlace where = slot(slot_index);
    SubAllocationRow row;
    row.allocator = SubAllocator::PytorchCaching;
    row.parent_alloc_id = where.alloc_id;
    row.parent_offset = where.offset;
    row.address = where.address;
    row.bytes = kBufferBytes;
    row.device = 0;
    row.stream_handle = 0;
    row.alloc_ns = ns;
    row.alloc_tid = 1;
    oldest_.push_back({tensors_.insert(row), slot_index});
  }
  int64_t free_oldest(int64_t ns) {
    auto [id, slot_index] = oldest_.front();
    oldest_.pop_front();
    free_.bind(1, ns).bind(2, id).run();
    return slot_index;
  }

  bool sub_allocations_;
  int64_t allocations_;
  RowInserter<SubAllocationRow> tensors_;
  Statement free_;
  std::deque<std::pair<int64_t, int64_t>> oldest_;  // live tensors: row id, slot
  int64_t next_slot_ = 0;
};

}  // namespace

// Written through the generated row inserters in one transaction.
void write_synthetic_trace(const std::string& path, int64_t kernels, int64_t copies, bool api_calls,
                           bool sub_allocations, int64_t nvtx_depth, int64_t foreach_tensors) {
  std::remove(path.c_str());
  Database db(path, Database::Mode::Create);
  db.exec("PRAGMA journal_mode = WAL");
  apptracer::with_transaction(db, [&] { db.exec(apptracer::trace_schema_sql()); });
  apptracer::with_transaction(db, [&] {
    db.exec("INSERT OR REPLACE INTO meta VALUES ('status', 'complete')");
    RowInserter<StringRow> strings(db);
    for (int i = 1; i <= kKernelNames; ++i) {
      StringRow row;
      row.id = i;
      row.text = "kernel_" + std::to_string(i) + "(float const*, float const*, float*)";
      strings.insert(row);
    }
    for (int i = 0; i < 4; ++i) {
      StringRow row;
      row.id = kKernelNames + 1 + i;
      row.text = kApiNames[i];
      strings.insert(row);
    }
    StringRow range_name;
    range_name.id = kRangeNameId;
    range_name.text = "level";
    strings.insert(range_name);
    StringRow foreach_name;
    foreach_name.id = kForeachNameId;
    foreach_name.text =
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
        "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor>("
        "at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous "
        "namespace)::FusedAdamMathFunctor)";
    strings.insert(foreach_name);
    DeviceMemory memory(db, sub_allocations);
    int64_t device_allocations = memory.allocations();
    RowInserter<AllocationRow> allocation(db);
    for (int64_t i = 1; i <= device_allocations + kHostBuffers; ++i) {
      bool device = i <= device_allocations;
      AllocationRow row;
      row.id = i;
      row.kind = device ? AllocKind::Device : AllocKind::PinnedHost;
      row.address = device ? memory.allocation_address(i) : kHostBase + i * kBufferBytes;
      row.bytes = device ? memory.allocation_bytes() : kBufferBytes;
      if (device) row.device = 0;
      row.alloc_ns = i;
      allocation.insert(row);
    }
    int64_t first_parameter = device_allocations + kHostBuffers + 1;
    for (int64_t i = 0; i < foreach_tensors; ++i) {
      AllocationRow row;
      row.id = first_parameter + i;
      row.kind = AllocKind::Device;
      row.address = kParameterBase + i * kParameterBytes;
      row.bytes = kParameterBytes;
      row.device = 0;
      row.alloc_ns = first_parameter + i;
      allocation.insert(row);
    }
    memory.allocate_initial_tensors();
    RowInserter<KernelRow> kernel(db);
    RowInserter<KernelArgSetRow> arg_set(db);
    RowInserter<KernelArgWordRow> arg(db);
    RowInserter<MemcpyRow> copy(db);
    RowInserter<ApiCallRow> api(db);
    int64_t last_correlation_id = 0;
    // Records the runtime call (api_index), the driver call it made folded
    // in; returns its correlation id, or nothing without API calls.
    auto add_api_calls = [&](int api_index, int64_t start_ns) -> std::optional<int64_t> {
      if (!api_calls) return std::nullopt;
      int64_t runtime = ++last_correlation_id;
      ApiCallRow row;
      row.correlation_id = runtime;
      row.domain = ApiDomain::Runtime;
      row.cbid = kApiCbids[api_index];
      row.name_id = kKernelNames + 1 + api_index;
      row.driver_name_id = kKernelNames + 2 + api_index;
      row.tid = 1;
      row.start_ns = start_ns - 900;
      row.end_ns = start_ns + 900;
      api.insert(row);
      return runtime;
    };
    RowInserter<StreamEventRow> event(db);
    RowInserter<SyncRow> sync(db);

    std::mt19937_64 random(42);
    auto host_buffer = [&] { return device_allocations + int64_t(random() % kHostBuffers) + 1; };
    int64_t now = 1'000'000;
    int64_t copies_left = copies;
    int64_t copy_every = copies > 0 ? std::max<int64_t>(1, kernels / copies) : 0;
    for (int64_t k = 1; k <= kernels; ++k) {
      int64_t stream = kStreams[k % 2];
      now += 1000;
      // kernel(const float* a, const float* b, float* out), on random buffers:
      // every launch has an argument set of its own.
      KernelArgSetRow set;
      set.id = k;
      set.words = 3;
      arg_set.insert(set);
      for (int64_t param = 0; param < 3; ++param) {
        bool output = param == 2;
        DevicePlace buffer = output ? memory.output(random, now) : memory.any(random);
        KernelArgWordRow word;
        word.arg_set_id = k;
        word.param_index = param;
        word.offset = param * 8;
        word.size = 8;
        word.raw_value = buffer.address;
        word.alloc_id = buffer.alloc_id;
        word.alloc_offset = buffer.offset;
        word.access = output ? AccessKind::ReadWrite : AccessKind::Read;
        word.access_source = output ? AccessSource::Assumed : AccessSource::ConstSignature;
        arg.insert(word);
      }
      KernelRow launch;
      launch.id = k;
      launch.name_id = k % kKernelNames + 1;
      launch.demangled_id = k % kKernelNames + 1;
      launch.launch_kind = LaunchKind::Driver;
      launch.device = 0;
      launch.stream = stream;
      launch.arg_set_id = k;
      launch.api_start_ns = now;
      launch.gpu_start_ns = now + 3000;
      launch.gpu_end_ns = now + 5000;
      launch.call_correlation_id = add_api_calls(0, now);
      kernel.insert(launch);
      if (foreach_tensors > 0 && k % kStepKernels == 0) {
        // The step's optimizer: one launch over every parameter, through an
        // array of pointers in its first parameter. Its argument set is
        // numbered after the ordinary launches'.
        now += 1000;
        int64_t set_id = kernels + k / kStepKernels;
        KernelArgSetRow foreach_set;
        foreach_set.id = set_id;
        foreach_set.words = foreach_tensors;
        arg_set.insert(foreach_set);
        for (int64_t i = 0; i < foreach_tensors; ++i) {
          KernelArgWordRow word;
          word.arg_set_id = set_id;
          word.param_index = 0;
          word.offset = i * 8;
          word.size = 8;
          word.raw_value = kParameterBase + i * kParameterBytes;
          word.alloc_id = first_parameter + i;
          word.alloc_offset = 0;
          word.access = AccessKind::ReadWrite;
          word.access_source = AccessSource::Assumed;
          arg.insert(word);
        }
        KernelRow step;
        step.id = kernels + k / kStepKernels;
        step.name_id = kForeachNameId;
        step.demangled_id = kForeachNameId;
        step.launch_kind = LaunchKind::Driver;
        step.device = 0;
        step.stream = stream;
        step.arg_set_id = set_id;
        step.api_start_ns = now;
        step.gpu_start_ns = now + 3000;
        step.gpu_end_ns = now + 5000;
        step.call_correlation_id = add_api_calls(0, now);
        kernel.insert(step);
      }
      if (copy_every && copies_left > 0 && k % copy_every == 0) {
        --copies_left;
        now += 500;
        bool to_device = random() % 2 == 0;
        int64_t host = host_buffer();
        DevicePlace device = memory.any(random);
        MemcpyRow row;
        row.kind = to_device ? CopyKind::HtoD : CopyKind::DtoH;
        row.bytes = kBufferBytes;
        row.src_alloc_id = to_device ? host : device.alloc_id;
        row.dst_alloc_id = to_device ? device.alloc_id : host;
        row.src_offset = to_device ? 0 : device.offset;
        row.dst_offset = to_device ? device.offset : 0;
        int64_t host_address = kHostBase + host * kBufferBytes;
        row.src_address = to_device ? host_address : device.address;
        row.dst_address = to_device ? device.address : host_address;
        row.src_memory = to_device ? MemoryKind::Pinned : MemoryKind::Device;
        row.dst_memory = to_device ? MemoryKind::Device : MemoryKind::Pinned;
        if (!to_device) row.src_device = 0;
        if (to_device) row.dst_device = 0;
        row.stream = stream;
        row.is_async = 1;
        row.api_start_ns = now;
        row.gpu_start_ns = now + 3000;
        row.gpu_end_ns = now + 4000;
        row.call_correlation_id = add_api_calls(2, now);
        copy.insert(row);
      }
      if (k % 1000 == 0) {
        // The other stream waits for this one.
        StreamEventRow row;
        row.kind = StreamEventKind::Record;
        row.event_handle = k;
        row.stream = stream;
        row.device = 0;
        row.ns = now + 1;
        event.insert(row);
        row.kind = StreamEventKind::Wait;
        row.stream = kStreams[(k + 1) % 2];
        row.ns = now + 2;
        event.insert(row);
      }
      if (k % 100000 == 0) {
        SyncRow row;
        row.kind = SyncKind::Device;
        row.device = 0;
        row.start_ns = now + 10;
        row.end_ns = now + 20;
        sync.insert(row);
      }
    }
    RowInserter<NvtxRangeRow> range(db);
    for (int64_t depth = 0; depth < nvtx_depth; ++depth) {
      NvtxRangeRow row;
      row.name_id = kRangeNameId;
      row.tid = 1;
      row.depth = depth;
      row.start_ns = 1'000'000 - 1000 + depth;
      row.end_ns = now + 10'000 - depth;
      row.kind = NvtxKind::PushPop;
      range.insert(row);
    }
  });
}

}  // namespace apptracer::bench
