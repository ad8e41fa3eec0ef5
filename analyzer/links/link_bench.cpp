#include "analyzer/links/link_bench.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <thread>

#include "analyzer/links/kernels_ptx.h"
#include "analyzer/model/median.h"

namespace apptracer::links {

namespace {

using model::HostMemory;
using model::LinkKind;

// Long enough for the host to issue an event, a transfer and an event
// behind it (a few µs each), short enough to add little to each sample.
constexpr uint64_t kHoldNs = 50'000;
constexpr int kEmptyIntervals = 15;
constexpr unsigned kTouchBlock = 256;
constexpr uint64_t kPageBytes = 4096;
// Host copies cycle through this much memory, more than any CPU's last-level
// cache: a program's copies read and write memory that is not cached (its
// buffers are larger, or other work ran since), and a pageable copy, staged
// by the CPU, measured on one cached source ran 15-25% faster than the same
// copies in a program (H100 host, 16 and 64 MiB).
constexpr size_t kHostSpanBytes = size_t{1} << 30;

// Runs the calling thread on `cpus` while alive; restores the old set after.
class CpuBinding {
 public:
  explicit CpuBinding(const std::vector<int>& cpus) {
    if (cpus.empty() || sched_getaffinity(0, sizeof old_, &old_) != 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : cpus) {
      if (cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
    }
    bound_ = sched_setaffinity(0, sizeof set, &set) == 0;
  }
  ~CpuBinding() {
    if (bound_) sched_setaffinity(0, sizeof old_, &old_);
  }
  CpuBinding(const CpuBinding&) = delete;
  CpuBinding& operator=(const CpuBinding&) = delete;

 private:
  cpu_set_t old_{};
  bool bound_ = false;
};

// Peer access between two GPUs, both ways, for the lifetime of the object.
class PeerAccess {
 public:
  PeerAccess(const CudaDriver& driver, const GpuSession& a, const GpuSession& b)
      : driver_(driver), a_(a), b_(b) {
    enable(a_, b_);
    enable(b_, a_);
  }
  // Errors are ignored here: a destructor must not throw, and the next
  // path's measuring reports a broken context anyway.
  ~PeerAccess() {
    driver_.cuCtxSetCurrent(b_.context());
    driver_.cuCtxDisablePeerAccess(a_.context());
    driver_.cuCtxSetCurrent(a_.context());
    driver_.cuCtxDisablePeerAccess(b_.context());
  }
  PeerAccess(const PeerAccess&) = delete;
  PeerAccess& operator=(const PeerAccess&) = delete;

 private:
  void enable(const GpuSession& from, const GpuSession& to) {
    from.make_current();
    CUresult result = driver_.cuCtxEnablePeerAccess(to.context(), 0);
    if (result != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) driver_.check(result, "cuCtxEnablePeerAccess");
  }
  const CudaDriver& driver_;
  const GpuSession& a_;
  const GpuSession& b_;
};

// The interval between events recorded on `stream` before and after what
// `issue` puts on it, once the second is reached.
double event_interval_ns(const CudaDriver& driver, CUstream stream, CUevent start, CUevent stop,
                         const std::function<void()>& issue) {
  driver.check(driver.cuEventRecord(start, stream), "cuEventRecord");
  issue();
  driver.check(driver.cuEventRecord(stop, stream), "cuEventRecord");
  driver.check(driver.cuEventSynchronize(stop), "cuEventSynchronize");
  float ms = 0;
  driver.check(driver.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
  return static_cast<double>(ms) * 1e6;
}

// A stream and two events in one GPU's context: one direction of a duplex
// measurement.
class CopyLane {
 public:
  CopyLane(const CudaDriver& driver, const GpuSession& gpu) : driver_(driver) {
    gpu.make_current();
    driver_.check(driver_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    driver_.check(driver_.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
    driver_.check(driver_.cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate");
  }
  // Errors are ignored: nothing is left to do about them when tearing down.
  ~CopyLane() {
    if (stream_) driver_.cuStreamSynchronize(stream_);
    if (start_) driver_.cuEventDestroy(start_);
    if (stop_) driver_.cuEventDestroy(stop_);
    if (stream_) driver_.cuStreamDestroy(stream_);
  }
  CopyLane(const CopyLane&) = delete;
  CopyLane& operator=(const CopyLane&) = delete;

  // The events' interval around what `issue` puts on the lane's stream.
  double time_ns(const std::function<void(CUstream)>& issue) {
    return event_interval_ns(driver_, stream_, start_, stop_, [&] { issue(stream_); });
  }

 private:
  const CudaDriver& driver_;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr, stop_ = nullptr;
};

CUmemLocation host_location() {
  CUmemLocation location{};
  location.type = CU_MEM_LOCATION_TYPE_HOST;
  return location;
}

CUmemLocation device_location(int ordinal) {
  CUmemLocation location{};
  location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  location.id = ordinal;
  return location;
}

}  // namespace

GpuSession::GpuSession(const CudaDriver& driver, int ordinal, size_t buffer_bytes)
    : driver_(driver), ordinal_(ordinal) {
  CUdevice device = 0;
  driver_.check(driver_.cuDeviceGet(&device, ordinal), "cuDeviceGet");
  driver_.check(driver_.cuDevicePrimaryCtxRetain(&context_, device), "cuDevicePrimaryCtxRetain");
  make_current();
  driver_.check(driver_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  driver_.check(driver_.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
  driver_.check(driver_.cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate");
  driver_.check(driver_.cuModuleLoadData(&module_, kLinksKernelsPtx), "cuModuleLoadData (kernels.ptx)");
  driver_.check(driver_.cuModuleGetFunction(&sleep_, module_, "apptracer_sleep"), "cuModuleGetFunction");
  driver_.check(driver_.cuModuleGetFunction(&touch_, module_, "apptracer_touch"), "cuModuleGetFunction");
  driver_.check(driver_.cuMemAlloc(&a_, buffer_bytes), "cuMemAlloc");
  driver_.check(driver_.cuMemAlloc(&b_, buffer_bytes), "cuMemAlloc");
  std::vector<double> empty;
  for (int i = 0; i < kEmptyIntervals; ++i) empty.push_back(interval_ns([] {}));
  empty_ns_ = model::median(empty);
}

// Errors are ignored: nothing is left to do about them when tearing down.
GpuSession::~GpuSession() {
  driver_.cuCtxSetCurrent(context_);
  driver_.cuStreamSynchronize(stream_);
  if (a_) driver_.cuMemFree(a_);
  if (b_) driver_.cuMemFree(b_);
  if (module_) driver_.cuModuleUnload(module_);
  if (start_) driver_.cuEventDestroy(start_);
  if (stop_) driver_.cuEventDestroy(stop_);
  if (stream_) driver_.cuStreamDestroy(stream_);
  CUdevice device = 0;
  if (context_ && driver_.cuDeviceGet(&device, ordinal_) == CUDA_SUCCESS)
    driver_.cuDevicePrimaryCtxRelease(device);
}

void GpuSession::make_current() const { driver_.check(driver_.cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }

void GpuSession::launch_sleep() {
  uint64_t ns = kHoldNs;
  void* params[] = {&ns};
  driver_.check(driver_.cuLaunchKernel(sleep_, 1, 1, 1, 1, 1, 1, 0, stream_, params, nullptr),
                "cuLaunchKernel (apptracer_sleep)");
}

void GpuSession::touch(CUdeviceptr data, size_t bytes) {
  uint64_t size = bytes, stride = kPageBytes;
  uint64_t threads = (bytes + kPageBytes - 1) / kPageBytes;
  auto blocks = static_cast<unsigned>((threads + kTouchBlock - 1) / kTouchBlock);
  void* params[] = {&data, &size, &stride};
  driver_.check(driver_.cuLaunchKernel(touch_, blocks, 1, 1, kTouchBlock, 1, 1, 0, stream_, params, nullptr),
                "cuLaunchKernel (apptracer_touch)");
}

double GpuSession::interval_ns(const std::function<void()>& issue) {
  launch_sleep();
  return event_interval_ns(driver_, stream_, start_, stop_, issue);
}

double GpuSession::time_ns(const std::function<void()>& issue) {
  return std::max(0.0, interval_ns(issue) - empty_ns_);
}

double GpuSession::added_ns(const std::function<void(int)>& copy) {
  double one = interval_ns([&] { copy(0); });
  double two = interval_ns([&] {
    copy(1);
    copy(2);
  });
  return std::max(0.0, two - one);
}

LinkBench::LinkBench(const CudaDriver& driver, const std::vector<model::GpuInfo>& gpus, size_t largest,
                     std::map<int, std::vector<int>> node_cpus)
    : driver_(driver), largest_(largest), info_(gpus), node_cpus_(std::move(node_cpus)) {
  for (const model::GpuInfo& gpu : gpus) {
    gpus_.push_back(std::make_unique<GpuSession>(driver, gpu.ordinal, largest));
  }
}

LinkBench::~LinkBench() {
  if (host_ && host_registered_) driver_.cuMemHostUnregister(host_->data());
  for (auto& [ordinal, pointer] : managed_) driver_.cuMemFree(pointer);
}

GpuSession& LinkBench::gpu(int ordinal) {
  for (auto& session : gpus_) {
    if (session->ordinal() == ordinal) return *session;
  }
  throw DriverError("GPU " + std::to_string(ordinal) + " is not being measured");
}

NodeBuffer& LinkBench::host_buffer(int node, bool pinned) {
  if (!host_ || host_->node() != node) {
    if (host_ && host_registered_) driver_.cuMemHostUnregister(host_->data());
    host_registered_ = false;
    host_.reset();
    host_ = std::make_unique<NodeBuffer>(std::max(largest_, kHostSpanBytes), node);
    host_offset_ = 0;
  }
  if (pinned != host_registered_) {
    if (pinned) {
      // Portable: pinned for every context, so one registration serves all GPUs.
      driver_.check(driver_.cuMemHostRegister(host_->data(), host_->bytes(), CU_MEMHOSTREGISTER_PORTABLE),
                    "cuMemHostRegister");
    } else {
      driver_.check(driver_.cuMemHostUnregister(host_->data()), "cuMemHostUnregister");
    }
    host_registered_ = pinned;
  }
  return *host_;
}

void* LinkBench::next_host_region(NodeBuffer& host, int64_t bytes) {
  size_t size = (static_cast<size_t>(bytes) + kPageBytes - 1) / kPageBytes * kPageBytes;
  if (host_offset_ + size > host.bytes()) host_offset_ = 0;
  void* region = static_cast<char*>(host.data()) + host_offset_;
  host_offset_ += size;
  return region;
}

CUdeviceptr LinkBench::managed_buffer(int ordinal) {
  auto found = managed_.find(ordinal);
  if (found != managed_.end()) return found->second;
  gpu(ordinal).make_current();
  CUdeviceptr pointer = 0;
  driver_.check(driver_.cuMemAllocManaged(&pointer, largest_, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
  // First touch on the host: every page starts there.
  std::memset(reinterpret_cast<void*>(pointer), 0x5a, largest_);
  managed_.emplace(ordinal, pointer);
  return pointer;
}

// One timed transfer of a given size over `path`, including any preparation
// that must not be timed (where managed pages start).
std::function<double(int64_t)> LinkBench::transfer(const model::LinkPath& path, std::string& note) {
  GpuSession& session = gpu(path.device);
  CUstream stream = session.stream();
  CUdeviceptr device = session.buffer(0);
  auto prefetch = [this, stream](CUdeviceptr data, int64_t bytes, CUmemLocation to) {
    driver_.check(driver_.cuMemPrefetchAsync(data, bytes, to, 0, stream), "cuMemPrefetchAsync");
  };
  switch (path.kind) {
    case LinkKind::HtoD:
    case LinkKind::DtoH: {
      NodeBuffer& host = host_buffer(path.numa_node, path.host == HostMemory::Pinned);
      if (!host.placement_problem().empty()) note = host.placement_problem();
      bool to_device = path.kind == LinkKind::HtoD;
      bool fresh = path.host == HostMemory::Fresh;
      bool staged = path.host != HostMemory::Pinned;
      return [this, &session, &host, device, stream, to_device, fresh, staged](int64_t bytes) {
        // Each copy its own region, none of them cached by an earlier one.
        void* regions[3];
        for (void*& region : regions) {
          region = next_host_region(host, bytes);
          // Untouched memory, as a new allocation's: the region's pages are
          // given back, so the copy's staging faults each in again (on the
          // buffer's node: the mapping keeps its binding). The copy leaves
          // them touched for whatever is measured next.
          if (fresh) host.discard(region, static_cast<size_t>(bytes));
        }
        auto copy = [&](int k) {
          if (to_device) {
            driver_.check(driver_.cuMemcpyHtoDAsync(device, regions[k], bytes, stream), "cuMemcpyHtoDAsync");
          } else {
            driver_.check(driver_.cuMemcpyDtoHAsync(regions[k], device, bytes, stream), "cuMemcpyDtoHAsync");
          }
        };
        // A staged copy is priced whole (its staging included) and split as
        // a trace splits it; the next one's staging would overlap its DMA.
        return staged ? session.time_ns([&] { copy(0); }) : session.added_ns(copy);
      };
    }
    case LinkKind::DtoD: {
      CUdeviceptr other = session.buffer(1);
      return [this, &session, device, other, stream](int64_t bytes) {
        return session.added_ns([&](int) {
          driver_.check(driver_.cuMemcpyDtoDAsync(other, device, bytes, stream), "cuMemcpyDtoDAsync");
        });
      };
    }
    case LinkKind::PeerDirect:
    case LinkKind::PeerStaged: {
      GpuSession& peer = gpu(path.peer);
      return [this, &session, &peer, device, stream](int64_t bytes) {
        session.make_current();
        return session.added_ns([&](int) {
          driver_.check(driver_.cuMemcpyPeerAsync(peer.buffer(0), peer.context(), device,
                                                  session.context(), bytes, stream),
                        "cuMemcpyPeerAsync");
        });
      };
    }
    case LinkKind::PrefetchHtoD:
    case LinkKind::PrefetchDtoH: {
      CUdeviceptr managed = managed_buffer(path.device);
      bool to_device = path.kind == LinkKind::PrefetchHtoD;
      CUmemLocation from = to_device ? host_location() : device_location(path.device);
      CUmemLocation to = to_device ? device_location(path.device) : host_location();
      return [this, &session, managed, stream, prefetch, from, to](int64_t bytes) {
        session.make_current();
        prefetch(managed, bytes, from);
        driver_.check(driver_.cuStreamSynchronize(stream), "cuStreamSynchronize");
        return session.time_ns([&] { prefetch(managed, bytes, to); });
      };
    }
    case LinkKind::FaultHtoD: {
      CUdeviceptr managed = managed_buffer(path.device);
      note = "a kernel touching every 4 KiB page, less the same kernel on resident pages";
      return [this, &session, managed, stream, prefetch](int64_t bytes) {
        session.make_current();
        prefetch(managed, bytes, host_location());
        driver_.check(driver_.cuStreamSynchronize(stream), "cuStreamSynchronize");
        double faulting = session.interval_ns([&] { session.touch(managed, bytes); });
        double resident = session.interval_ns([&] { session.touch(managed, bytes); });
        return std::max(0.0, faulting - resident);
      };
    }
  }
  throw DriverError("unknown path kind");
}

std::vector<int> LinkBench::host_cpus(int device) const {
  for (const model::GpuInfo& info : info_) {
    auto cpus = node_cpus_.find(info.numa_node);
    if (info.ordinal == device && cpus != node_cpus_.end()) return cpus->second;
  }
  return {};
}

model::MeasuredPath LinkBench::measure(const PlannedPath& planned, const std::function<void()>& on_sample) {
  const model::LinkPath& path = planned.path;
  model::MeasuredPath measured;
  measured.path = path;
  bool host_path = path.kind == LinkKind::HtoD || path.kind == LinkKind::DtoH;
  CpuBinding binding(host_path ? host_cpus(path.device) : std::vector<int>{});
  std::unique_ptr<PeerAccess> peer_access;
  if (path.kind == LinkKind::PeerDirect) {
    peer_access = std::make_unique<PeerAccess>(driver_, gpu(path.device), gpu(path.peer));
  }
  gpu(path.device).make_current();
  std::function<double(int64_t)> one = transfer(path, measured.note);
  // Untimed first: page tables, staging buffers and peer mappings get set up.
  one(planned.sizes.back());
  std::vector<model::Sample> flat;
  for (int64_t bytes : planned.sizes) {
    model::SizeSamples size{bytes, {}};
    for (int i = 0; i < planned.repetitions; ++i) {
      size.ns.push_back(one(bytes));
      flat.push_back({bytes, size.ns.back()});
      on_sample();
    }
    measured.samples.push_back(size);
  }
  measured.model = model::fit_link_model(flat);
  return measured;
}

LinkBench::DuplexResult LinkBench::measure_duplex(const PlannedDuplex& planned,
                                                  const std::function<void()>& on_sample) {
  GpuSession& session = gpu(planned.device);
  std::vector<int> cpus = host_cpus(planned.device);
  NodeBuffer& host = host_buffer(planned.numa_node, planned.host == HostMemory::Pinned);
  // Each direction cycles through its own half of the host buffer (see
  // kHostSpanBytes), HtoD into device buffer 0, DtoH from buffer 1.
  size_t size = (static_cast<size_t>(planned.bytes) + kPageBytes - 1) / kPageBytes * kPageBytes;
  size_t half = host.bytes() / 2;
  size_t slots = std::max<size_t>(1, half / size);
  int64_t bytes = std::min<int64_t>(planned.bytes, static_cast<int64_t>(half));
  CopyLane lanes[2] = {CopyLane(driver_, session), CopyLane(driver_, session)};
  // Direction 0 is HtoD, 1 DtoH. Times copies until it has `planned.copies`
  // (then sets done[direction]) and `other` (nullptr: alone) is set too.
  std::atomic<bool> done[2] = {false, false};
  auto run = [&](int direction, const std::atomic<bool>* other) {
    std::vector<double> times;
    char* base = static_cast<char*>(host.data()) + direction * half;
    for (size_t i = 0;; ++i) {
      void* region = base + (i % slots) * size;
      times.push_back(lanes[direction].time_ns([&](CUstream stream) {
        if (direction == 0) {
          driver_.check(driver_.cuMemcpyHtoDAsync(session.buffer(0), region, bytes, stream), "cuMemcpyHtoDAsync");
        } else {
          driver_.check(driver_.cuMemcpyDtoHAsync(region, session.buffer(1), bytes, stream), "cuMemcpyDtoHAsync");
        }
      }));
      if (static_cast<int>(times.size()) == planned.copies) done[direction] = true;
      if (static_cast<int>(times.size()) >= planned.copies && (!other || *other)) break;
    }
    times.erase(times.begin());
    times.resize(planned.copies - 1);
    return model::median(times);
  };
  double alone[2] = {0, 0}, both[2] = {0, 0};
  {
    CpuBinding binding(cpus);
    session.make_current();
    for (int direction : {0, 1}) {
      alone[direction] = run(direction, nullptr);
      for (int i = 0; i < planned.copies; ++i) on_sample();
    }
  }
  done[0] = done[1] = false;
  std::atomic<int> started{0};
  std::exception_ptr failed[2];
  auto worker = [&](int direction) {
    // Both start copying together; a failing one still sets its flag so the
    // other stops.
    ++started;
    while (started < 2) std::this_thread::yield();
    try {
      CpuBinding binding(cpus);
      session.make_current();
      both[direction] = run(direction, &done[1 - direction]);
    } catch (...) {
      failed[direction] = std::current_exception();
    }
    done[direction] = true;
  };
  std::thread htod(worker, 0), dtoh(worker, 1);
  htod.join();
  dtoh.join();
  for (const std::exception_ptr& error : failed) {
    if (error) std::rethrow_exception(error);
  }
  for (int i = 0; i < 2 * planned.copies; ++i) on_sample();
  auto result = [&](int direction) {
    return model::Duplex{bytes, static_cast<double>(bytes) / both[direction],
                         std::min(1.0, alone[direction] / both[direction])};
  };
  return {result(0), result(1)};
}

}  // namespace apptracer::links
