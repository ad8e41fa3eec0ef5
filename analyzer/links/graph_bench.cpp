#include "analyzer/links/graph_bench.h"

#include <chrono>

namespace apptracer::links {

namespace {

// Each node's two stamps: its start and its end, on the GPU's clock.
constexpr int64_t kStampBytes = 16;

// A graph made by capturing `nodes` stamp kernels on `stream`, each writing
// its own two words of `stamps`; destroyed with the object.
class StampGraph {
 public:
  StampGraph(const CudaDriver& driver, CUstream stream, CUfunction stamp, CUdeviceptr stamps, int64_t nodes)
      : driver_(driver) {
    driver_.check(driver_.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                  "cuStreamBeginCapture");
    CUresult launched = CUDA_SUCCESS;
    for (int64_t i = 0; i < nodes && launched == CUDA_SUCCESS; ++i) {
      CUdeviceptr times = stamps + static_cast<CUdeviceptr>(i * kStampBytes);
      void* params[] = {&times};
      launched = driver_.cuLaunchKernel(stamp, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr);
    }
    // The capture ends whatever happened, so the stream is usable again.
    CUresult ended = driver_.cuStreamEndCapture(stream, &graph_);
    driver_.check(launched, "cuLaunchKernel (apptracer_stamp, captured)");
    driver_.check(ended, "cuStreamEndCapture");
    driver_.check(driver_.cuGraphInstantiateWithFlags(&exec_, graph_, 0), "cuGraphInstantiateWithFlags");
  }
  // Errors are ignored: nothing is left to do about them when tearing down.
  ~StampGraph() {
    if (exec_) driver_.cuGraphExecDestroy(exec_);
    if (graph_) driver_.cuGraphDestroy(graph_);
  }
  StampGraph(const StampGraph&) = delete;
  StampGraph& operator=(const StampGraph&) = delete;

  CUgraphExec exec() const { return exec_; }

 private:
  const CudaDriver& driver_;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

// The mean idle time between consecutive nodes' stamps: [start, end] pairs.
double mean_gap_ns(const std::vector<uint64_t>& stamps) {
  size_t nodes = stamps.size() / 2;
  if (nodes < 2) return 0;
  double total = 0;
  for (size_t i = 1; i < nodes; ++i) {
    total += static_cast<double>(static_cast<int64_t>(stamps[2 * i] - stamps[2 * i - 1]));
  }
  return total / static_cast<double>(nodes - 1);
}

}  // namespace

// A chain long enough that the mean gap is not one timer tick (the global
// timer ticks every 32 ns to 1 us, by GPU), and a larger one to see how the
// host's launch cost grows with a step's hundreds of kernels.
std::vector<int64_t> graph_sizes() { return {64, 1024}; }

int graph_repetitions(bool quick) { return quick ? 5 : 11; }

model::GraphLaunch measure_graph_launch(const CudaDriver& driver, GpuSession& session, bool quick,
                                        const std::function<void()>& on_sample) {
  session.make_current();
  CUfunction stamp = nullptr;
  driver.check(driver.cuModuleGetFunction(&stamp, session.module(), "apptracer_stamp"), "cuModuleGetFunction");
  CUstream stream = session.stream();
  CUdeviceptr stamps = session.buffer(0);
  std::vector<model::GraphLaunchSamples> samples;
  for (int64_t nodes : graph_sizes()) {
    StampGraph graph(driver, stream, stamp, stamps, nodes);
    std::vector<uint64_t> times(static_cast<size_t>(2 * nodes));
    model::GraphLaunchSamples size{nodes, {}, {}};
    // Untimed first: the driver uploads the graph on its first launch.
    driver.check(driver.cuGraphLaunch(graph.exec(), stream), "cuGraphLaunch");
    driver.check(driver.cuStreamSynchronize(stream), "cuStreamSynchronize");
    for (int i = 0; i < graph_repetitions(quick); ++i) {
      auto before = std::chrono::steady_clock::now();
      driver.check(driver.cuGraphLaunch(graph.exec(), stream), "cuGraphLaunch");
      auto after = std::chrono::steady_clock::now();
      driver.check(driver.cuMemcpyDtoHAsync(times.data(), stamps, times.size() * sizeof(uint64_t), stream),
                   "cuMemcpyDtoHAsync");
      driver.check(driver.cuStreamSynchronize(stream), "cuStreamSynchronize");
      size.launch_ns.push_back(std::chrono::duration<double, std::nano>(after - before).count());
      size.node_ns.push_back(mean_gap_ns(times));
      on_sample();
    }
    samples.push_back(std::move(size));
  }
  return model::fit_graph_launch(session.ordinal(), std::move(samples));
}

}  // namespace apptracer::links
