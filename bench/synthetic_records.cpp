#include "synthetic_records.h"

#include <cupti.h>

#include <algorithm>
#include <cstdio>

#include "buffer/string_table.h"
#include "frameworks/sub_allocation_events.h"

namespace apptracer::bench {

namespace {

constexpr uint64_t kDeviceBase = 0x7f0000000000;
constexpr uint64_t kPinnedBase = 0x200000000;
constexpr uint64_t kPageableBase = 0x560000000000;
constexpr uint64_t kBufferBytes = 1 << 20;
constexpr uint64_t kDeviceBuffers = 1000;
constexpr uint64_t kPinnedBuffers = 100;
constexpr uint64_t kCopyBytes = 64;
constexpr uint64_t kHostAllocBytes = 256;
constexpr uint64_t kTensorBytes = 4096;
constexpr int kKernelNames = 40;
// Activity arrives this many operations after its call: CUPTI hands it over
// in buffers, later and from another thread.
constexpr size_t kActivityLag = 256;

uint64_t device_buffer(uint64_t n) { return kDeviceBase + (n % kDeviceBuffers) * kBufferBytes; }
uint64_t pinned_buffer(uint64_t n) { return kPinnedBase + (n % kPinnedBuffers) * kBufferBytes; }

uint32_t intern_kernel_name(int n) {
  char mangled[64];
  std::snprintf(mangled, sizeof mangled, "_Z9kernel_%02dPKfS0_Pf", n);
  return strings().intern(mangled);
}

}  // namespace

void add_buffers(RecordBuffers& buffers, AllocationRegistry& registry) {
  auto add = [&](uint64_t address, AllocKind kind, int32_t device) {
    Record r{};
    r.type = RecordType::Allocation;
    r.allocation.alloc_id = registry.add(address, kBufferBytes, kind, device, 1);
    r.allocation.address = address;
    r.allocation.bytes = kBufferBytes;
    r.allocation.ns = 1;
    r.allocation.device = device;
    r.allocation.kind = kind;
    buffers.append(r);
  };
  for (uint64_t i = 0; i < kDeviceBuffers; ++i) add(device_buffer(i), AllocKind::Device, 0);
  for (uint64_t i = 0; i < kPinnedBuffers; ++i) add(pinned_buffer(i), AllocKind::PinnedHost, -1);
}

RecordSource::RecordSource(RecordBuffers& buffers, AllocationRegistry& registry, int thread_index,
                           int threads)
    : buffers_(buffers),
      registry_(registry),
      thread_index_(thread_index),
      threads_(threads),
      clock_ns_(1'000'000'000ull + static_cast<uint64_t>(thread_index)) {
  for (int n = 0; n < kKernelNames; ++n) kernel_names_.push_back(intern_kernel_name(n));
}

uint32_t RecordSource::next_correlation_id() {
  // Unique across threads, two ids per operation (runtime call, driver call).
  return static_cast<uint32_t>((operations_ * threads_ + thread_index_) * 2 + 1);
}

Record RecordSource::runtime_call(uint32_t correlation_id, const char* name, uint16_t cbid,
                                  const char* driver_name) {
  Record r{};
  r.type = RecordType::ApiCall;
  r.correlation_id = correlation_id;
  r.own_correlation_id = correlation_id;
  r.api.start_ns = clock_ns_;
  r.api.end_ns = clock_ns_ + 800;
  r.api.device = -1;
  r.api.stream = -1;
  r.api.domain = ApiDomain::Runtime;
  r.api.cbid = cbid;
  r.api.name = name;
  r.api.driver_name = driver_name;
  return r;
}

void RecordSource::emit(Operation op) {
  clock_ns_ += 1000;
  switch (op) {
    case Operation::Launch: emit_launch(); break;
    case Operation::Copy: emit_copy(); break;
    case Operation::HostAlloc: emit_host_alloc(); break;
    case Operation::TensorBlock: emit_tensor_block(); break;
  }
  ++operations_;
}

void RecordSource::emit_launch() {
  uint32_t outer = next_correlation_id();
  Record kernel{};
  kernel.type = RecordType::Kernel;
  kernel.correlation_id = outer;
  kernel.own_correlation_id = outer + 1;
  kernel.kernel.function_handle = 0x1000 + operations_ % kKernelNames;
  kernel.kernel.api_start_ns = clock_ns_;
  kernel.kernel.name_id = kernel_names_[operations_ % kKernelNames];
  kernel.kernel.launch.grid_x = 256;
  kernel.kernel.launch.grid_y = kernel.kernel.launch.grid_z = 1;
  kernel.kernel.launch.block_x = 128;
  kernel.kernel.launch.block_y = kernel.kernel.launch.block_z = 1;
  kernel.kernel.device = -1;
  kernel.kernel.arg_words = 3;
  kernel.kernel.args_captured = true;
  kernel.kernel.launch_kind = LaunchKind::Driver;
  buffers_.append(kernel);

  // kernel_NN(const float* a, const float* b, float* out): three pointer words.
  Record args{};
  args.type = RecordType::KernelArgs;
  args.correlation_id = outer;
  args.own_correlation_id = outer + 1;
  args.kernel_args.count = 3;
  args.kernel_args.last = true;
  for (uint16_t i = 0; i < 3; ++i) {
    args.kernel_args.words[i] = KernelArgWord{device_buffer(operations_ * 3 + i), i * 8u, i, 8};
  }
  buffers_.append(args);

  Record runtime = runtime_call(outer, "cudaLaunchKernel",
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cuLaunchKernel");
  buffers_.append(runtime);

  Record activity{};
  activity.type = RecordType::GpuKernel;
  activity.correlation_id = outer;
  activity.gpu_kernel.start_ns = clock_ns_ + 5000;
  activity.gpu_kernel.end_ns = clock_ns_ + 7000;
  activity.gpu_kernel.name_id = kernel.kernel.name_id;
  activity.gpu_kernel.stream = 7;
  const LaunchValues& launch = kernel.kernel.launch;
  uint32_t grid[3] = {launch.grid_x, launch.grid_y, launch.grid_z};
  uint32_t block[3] = {launch.block_x, launch.block_y, launch.block_z};
  std::copy(grid, grid + 3, activity.gpu_kernel.grid);
  std::copy(block, block + 3, activity.gpu_kernel.block);
  activity.gpu_kernel.registers_per_thread = 32;
  activity.gpu_kernel.device = 0;
  trail(activity);
}

void RecordSource::emit_copy() {
  uint32_t outer = next_correlation_id();
  Record copy{};
  copy.type = RecordType::Memcpy;
  copy.correlation_id = outer;
  copy.own_correlation_id = outer + 1;
  copy.memcpy.src = pinned_buffer(operations_) + (operations_ % 1024) * kCopyBytes;
  copy.memcpy.dst = device_buffer(operations_ * 7) + (operations_ % 1024) * kCopyBytes;
  copy.memcpy.bytes = kCopyBytes;
  copy.memcpy.api_start_ns = clock_ns_;
  copy.memcpy.src_device = copy.memcpy.dst_device = -1;
  copy.memcpy.kind = CopyKind::HtoD;
  copy.memcpy.is_async = true;
  buffers_.append(copy);

  Record runtime = runtime_call(outer, "cudaMemcpyAsync",
                                CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
                                "cuMemcpyHtoDAsync_v2");
  buffers_.append(runtime);

  Record activity{};
  activity.type = RecordType::GpuMemcpy;
  activity.correlation_id = outer;
  activity.gpu_memcpy.start_ns = clock_ns_ + 3000;
  activity.gpu_memcpy.end_ns = clock_ns_ + 4000;
  activity.gpu_memcpy.bytes = kCopyBytes;
  activity.gpu_memcpy.stream = 7;
  activity.gpu_memcpy.device = 0;
  activity.gpu_memcpy.src_device = activity.gpu_memcpy.dst_device = -1;
  activity.gpu_memcpy.kind = CopyKind::HtoD;
  activity.gpu_memcpy.src_memory = MemoryKind::Pinned;
  activity.gpu_memcpy.dst_memory = MemoryKind::Device;
  activity.gpu_memcpy.is_async = true;
  trail(activity);
}

void RecordSource::emit_host_alloc() {
  uint64_t address = kPageableBase + (static_cast<uint64_t>(thread_index_) << 32) +
                     (operations_ % 4096) * kHostAllocBytes;
  Record alloc{};
  alloc.type = RecordType::Allocation;
  alloc.allocation.alloc_id = registry_.add(address, kHostAllocBytes, AllocKind::PageableHost, -1, clock_ns_);
  alloc.allocation.address = address;
  alloc.allocation.bytes = kHostAllocBytes;
  alloc.allocation.ns = clock_ns_;
  alloc.allocation.device = -1;
  alloc.allocation.kind = AllocKind::PageableHost;
  buffers_.append(alloc);

  Record free{};
  free.type = RecordType::Free;
  free.free.ns = clock_ns_ + 500;
  free.free.alloc_id = registry_.remove(address, free.free.ns)->id;
  buffers_.append(free);
}

void RecordSource::emit_tensor_block() {
  frameworks::FrameworkEvent e;
  e.allocator = SubAllocator::PytorchCaching;
  e.device = 0;
  e.address = device_buffer(operations_ * 7 + thread_index_) + (operations_ % 256) * kTensorBytes;
  e.bytes = kTensorBytes;
  e.stream = 7;
  for (SubAllocationEvent event :
       {SubAllocationEvent::Alloc, SubAllocationEvent::FreeRequested, SubAllocationEvent::Free}) {
    e.event = event;
    frameworks::record_event(e);
  }
}

void RecordSource::trail(const Record& activity) {
  trailing_activity_.push_back(activity);
  if (trailing_activity_.size() <= kActivityLag) return;
  buffers_.append(trailing_activity_.front());
  trailing_activity_.pop_front();
}

void RecordSource::flush_activity() {
  for (Record& activity : trailing_activity_) buffers_.append(activity);
  trailing_activity_.clear();
}

}  // namespace apptracer::bench
