// Measuring planned paths on the GPUs (path_plan.h) with the driver API.
//
// Every sample is the GPU's time for one transfer: on the GPU's stream a
// short spin kernel holds the stream, then event, transfer(s), event are
// issued. Holding the stream keeps the host's issue time out of the
// interval (what a trace's copy durations, from CUPTI, also leave out). A
// copy's time is what one more copy adds to a stream already copying: the
// interval around two back to back, less the interval around one. A trace
// leaves the copy engine's start after what came before on the stream out
// of a copy's duration (it is in the gap the trace records before the copy,
// which a replay keeps), and one copy after an event holds that start: a
// pinned 1 MiB copy's single interval was 26.8 us on an H200 where CUPTI's
// activity says 21.3 us. A copy from or to pageable memory (staged by the
// host: a replay prices it whole and splits it as the trace did) and a
// prefetch take their interval less that of two events with nothing between
// them; two staged copies back to back overlap one's staging with the
// other's DMA. A copy from pageable memory makes
// the host wait for the stream and stage the data itself, so that host work
// is inside its interval: it is part of what such a copy costs.
//
// Managed memory: a prefetch is timed like a copy, from pages all on the
// host (HtoD) or all on the GPU (DtoH). On-demand migration is a kernel
// touching every 4 KiB page of a host-resident range, less the same kernel
// over the then GPU-resident range.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/links/cuda_driver.h"
#include "analyzer/links/node_buffer.h"
#include "analyzer/links/path_plan.h"
#include "analyzer/model/system_model.h"

namespace apptracer::links {

// One GPU: its primary context, a stream, two events, the two kernels
// (kernels.ptx) and two device buffers of the largest size measured.
class GpuSession {
 public:
  GpuSession(const CudaDriver& driver, int ordinal, size_t buffer_bytes);
  ~GpuSession();
  GpuSession(const GpuSession&) = delete;
  GpuSession& operator=(const GpuSession&) = delete;

  int ordinal() const { return ordinal_; }
  CUcontext context() const { return context_; }
  CUstream stream() const { return stream_; }
  CUmodule module() const { return module_; }
  CUdeviceptr buffer(int which) const { return which == 0 ? a_ : b_; }
  void make_current() const;

  // The GPU's time for what `issue` puts on stream(), in ns: its interval
  // less that of two events alone.
  double time_ns(const std::function<void()>& issue);
  // What one more copy adds, in ns (see above): `copy(k)` issues the k-th of
  // three copies (0 alone, then 1 and 2 back to back), each of its own data.
  double added_ns(const std::function<void(int)>& copy);
  // The raw event interval around `issue`, holding the stream first.
  double interval_ns(const std::function<void()>& issue);
  // Launches the page-touching kernel over [data, data + bytes) on stream().
  void touch(CUdeviceptr data, size_t bytes);

 private:
  void launch_sleep();

  const CudaDriver& driver_;
  int ordinal_;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr, stop_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction sleep_ = nullptr, touch_ = nullptr;
  CUdeviceptr a_ = 0, b_ = 0;
  double empty_ns_ = 0;
};

class LinkBench {
 public:
  // `gpus` in ordinal order; `largest` the largest size any path measures;
  // `node_cpus` the CPUs of each NUMA node. Host paths run on the CPUs of
  // the GPU's closest node (where a well-placed program runs), so only the
  // buffer's node varies between a GPU's host paths.
  LinkBench(const CudaDriver& driver, const std::vector<model::GpuInfo>& gpus, size_t largest,
            std::map<int, std::vector<int>> node_cpus);
  ~LinkBench();

  // Measures one path; `on_sample` is called after each repetition.
  model::MeasuredPath measure(const PlannedPath& planned, const std::function<void()>& on_sample);

  struct DuplexResult {
    model::Duplex htod, dtoh;
  };
  // Times `planned.copies` copies each way alone, then both ways at once,
  // each direction from its own thread (a pageable copy keeps its thread
  // busy staging) on its own stream. A direction keeps copying until the
  // other has timed its copies too, so each timed copy but the first (left
  // out) has the other direction running beside it. Alone and together are
  // timed the same way, so what the timing adds cancels in their ratio.
  // `on_sample` is called planned.samples() times.
  DuplexResult measure_duplex(const PlannedDuplex& planned, const std::function<void()>& on_sample);

  // The session of GPU `ordinal`; throws DriverError when it is not measured.
  GpuSession& gpu(int ordinal);

 private:
  // The CPUs of GPU `device`'s closest node, where host paths are measured
  // from (empty: unknown, the thread stays where it is).
  std::vector<int> host_cpus(int device) const;
  NodeBuffer& host_buffer(int node, bool pinned);
  // Where the next host transfer of `bytes` starts in `host`: each one after
  // the last, wrapping, so none finds its data in the CPU's caches.
  void* next_host_region(NodeBuffer& host, int64_t bytes);
  CUdeviceptr managed_buffer(int ordinal);
  std::function<double(int64_t)> transfer(const model::LinkPath& path, std::string& note);

  const CudaDriver& driver_;
  size_t largest_;
  std::vector<std::unique_ptr<GpuSession>> gpus_;
  std::vector<model::GpuInfo> info_;
  std::unique_ptr<NodeBuffer> host_;
  bool host_registered_ = false;
  size_t host_offset_ = 0;
  std::map<int, CUdeviceptr> managed_;
  std::map<int, std::vector<int>> node_cpus_;
};

}  // namespace apptracer::links
