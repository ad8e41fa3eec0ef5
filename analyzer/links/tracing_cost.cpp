#include "analyzer/links/tracing_cost.h"

#include <cuda_runtime_api.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "analyzer/links/kernels_ptx.h"
#include "analyzer/links/link_bench.h"
#include "analyzer/model/median.h"
#include "analyzer/record/tracer_library.h"
#include "analyzer/trace/trace.h"
#include "analyzer/trace/trace_operations.h"
#include "analyzer/trace/tracer_time.h"

namespace apptracer::links {

namespace {

// Launches per timed batch: few enough that the launch queue never fills
// (a full queue makes a launch wait for the GPU, which is not its host cost).
constexpr int kBatchLaunches = 256;
constexpr int kBatches = 15;
// Idle before and after the timed batches: the tracer's tracer_time rows
// cover stretches of at least 50 ms that end at a writer pass, so the
// batches' calls get stretches of their own, without the set-up's calls
// (loading the kernel, the first launches), whose callbacks cost far more.
constexpr auto kQuietBeforeAndAfter = std::chrono::milliseconds(120);
// A stretch holding at least this many calls holds timed batches.
constexpr int64_t kTimedStretchCalls = kBatchLaunches * 2;

using Environment = std::vector<std::pair<std::string, std::string>>;

// Runs this apptracer as `links --launch-loop --gpu N` with `env` added; its
// last stdout line, parsed. Its stderr (the tracer's messages) goes to
// `log`, whose last line says why a run failed.
LaunchLoop run_launch_loop(const Environment& env, int gpu, const std::string& log) {
  int out[2];
  if (pipe(out) != 0) throw std::runtime_error("cannot make a pipe for the launch loop");
  pid_t child = fork();
  if (child < 0) throw std::runtime_error("cannot fork the launch loop");
  if (child == 0) {
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    dup2(out[1], STDOUT_FILENO);
    int err = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (err >= 0) dup2(err, STDERR_FILENO);
    close(out[0]);
    std::string gpu_text = std::to_string(gpu);
    execl("/proc/self/exe", "apptracer", "links", "--launch-loop", "--gpu", gpu_text.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string text;
  char buffer[256];
  ssize_t n;
  while ((n = read(out[0], buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
  }
  double ns = 0;
  char api[64] = {};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || std::sscanf(text.c_str(), "%lf %63s", &ns, api) != 2 ||
      ns <= 0) {
    std::string why;
    if (std::FILE* in = std::fopen(log.c_str(), "r")) {
      std::string line;
      while (std::fgets(buffer, sizeof buffer, in)) {
        line = buffer;
        if (line.size() > 1) why = line;
      }
      std::fclose(in);
    }
    while (!why.empty() && why.back() == '\n') why.pop_back();
    throw std::runtime_error("the launch loop failed" + (why.empty() ? std::string() : " (" + why + ")"));
  }
  return {ns, api};
}

// Times batches of `launch()`, each batch followed by `synchronize()`
// (untimed): the median host time of one launch, in ns.
template <typename Launch, typename Synchronize>
double time_launches(Launch launch, Synchronize synchronize) {
  for (int i = 0; i < kBatchLaunches; ++i) launch();  // untimed: first launches load and warm up
  synchronize();
  std::this_thread::sleep_for(kQuietBeforeAndAfter);
  std::vector<double> per_launch;
  for (int batch = 0; batch < kBatches; ++batch) {
    auto before = std::chrono::steady_clock::now();
    for (int i = 0; i < kBatchLaunches; ++i) launch();
    auto after = std::chrono::steady_clock::now();
    per_launch.push_back(std::chrono::duration<double, std::nano>(after - before).count() / kBatchLaunches);
    synchronize();
  }
  std::this_thread::sleep_for(kQuietBeforeAndAfter);
  return model::median(per_launch);
}

// The CUDA runtime, loaded at run time where it is installed: the path a
// framework's launches take (cudaLaunchKernel, then the driver's launch
// inside it: two CUPTI callbacks, where a driver launch makes one).
struct CudaRuntime {
  decltype(&::cudaLibraryLoadData) cudaLibraryLoadData = nullptr;
  decltype(&::cudaLibraryGetKernel) cudaLibraryGetKernel = nullptr;
  decltype(&::cudaLaunchKernel) cudaLaunchKernel = nullptr;
  decltype(&::cudaStreamCreateWithFlags) cudaStreamCreateWithFlags = nullptr;
  decltype(&::cudaStreamSynchronize) cudaStreamSynchronize = nullptr;
  decltype(&::cudaMalloc) cudaMalloc = nullptr;
  decltype(&::cudaSetDevice) cudaSetDevice = nullptr;
};

bool load_runtime(CudaRuntime& rt) {
  void* handle = nullptr;
  for (const char* name : {"libcudart.so.13", "libcudart.so"}) {
    if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
  }
  if (!handle) return false;
  auto load = [&](auto& slot, const char* name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(handle, name));
    return slot != nullptr;
  };
  return load(rt.cudaLibraryLoadData, "cudaLibraryLoadData") && load(rt.cudaLibraryGetKernel, "cudaLibraryGetKernel") &&
         load(rt.cudaLaunchKernel, "cudaLaunchKernel") &&
         load(rt.cudaStreamCreateWithFlags, "cudaStreamCreateWithFlags") &&
         load(rt.cudaStreamSynchronize, "cudaStreamSynchronize") && load(rt.cudaMalloc, "cudaMalloc") &&
         load(rt.cudaSetDevice, "cudaSetDevice");
}

// The runtime's launch loop; a negative time where any step of it failed.
double runtime_launch_ns(const CudaRuntime& rt, int gpu) {
  cudaLibrary_t library = nullptr;
  cudaKernel_t stamp = nullptr;
  cudaStream_t stream = nullptr;
  void* times = nullptr;
  if (rt.cudaSetDevice(gpu) != cudaSuccess ||
      rt.cudaLibraryLoadData(&library, kLinksKernelsPtx, nullptr, nullptr, 0, nullptr, nullptr, 0) != cudaSuccess ||
      rt.cudaLibraryGetKernel(&stamp, library, "apptracer_stamp") != cudaSuccess ||
      rt.cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess ||
      rt.cudaMalloc(&times, 16) != cudaSuccess) {
    return -1;
  }
  void* params[] = {&times};
  bool failed = false;
  double ns = time_launches(
      [&] {
        failed |= rt.cudaLaunchKernel(reinterpret_cast<const void*>(stamp), dim3(1), dim3(1), params, 0, stream) !=
                  cudaSuccess;
      },
      [&] { failed |= rt.cudaStreamSynchronize(stream) != cudaSuccess; });
  return failed ? -1 : ns;
}

}  // namespace

double loop_callbacks_ns(trace::Trace& trace) {
  const std::vector<trace::TracerTime::Stretch>& stretches = trace.tracer_time().stretches(trace::kSingleProcess);
  std::vector<int64_t> calls(stretches.size(), 0);
  for (const trace::HostCall& call : trace.operations().calls()) {
    auto s = std::upper_bound(stretches.begin(), stretches.end(), call.start_ns(),
                              [](int64_t ns, const trace::TracerTime::Stretch& stretch) { return ns < stretch.end_ns; });
    if (s != stretches.end() && call.start_ns() >= s->start_ns) ++calls[s - stretches.begin()];
  }
  int64_t in_calls = 0, timed_calls = 0;
  for (size_t i = 0; i < stretches.size(); ++i) {
    if (calls[i] < kTimedStretchCalls) continue;
    in_calls += stretches[i].in_calls_ns;
    timed_calls += calls[i];
  }
  return timed_calls > 0 ? static_cast<double>(in_calls) / static_cast<double>(timed_calls) : 0;
}

int tracing_cost_rounds(bool quick) { return quick ? 3 : 5; }

LaunchLoop launch_loop_ns(const CudaDriver& driver, int gpu) {
  CudaRuntime runtime;
  if (load_runtime(runtime)) {
    double ns = runtime_launch_ns(runtime, gpu);
    if (ns > 0) return {ns, "cudaLaunchKernel"};
  }
  GpuSession session(driver, gpu, 4096);
  CUfunction stamp = nullptr;
  driver.check(driver.cuModuleGetFunction(&stamp, session.module(), "apptracer_stamp"), "cuModuleGetFunction");
  CUdeviceptr times = session.buffer(0);
  void* params[] = {&times};
  CUstream stream = session.stream();
  double ns = time_launches(
      [&] {
        driver.check(driver.cuLaunchKernel(stamp, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr), "cuLaunchKernel");
      },
      [&] { driver.check(driver.cuStreamSynchronize(stream), "cuStreamSynchronize"); });
  return {ns, "cuLaunchKernel"};
}

model::TracingCost measure_tracing_cost(const std::string& library, int gpu, bool quick,
                                        const std::function<void()>& on_sample) {
  char pattern[] = "/tmp/apptracer-links-XXXXXX";
  if (!mkdtemp(pattern)) throw std::runtime_error("cannot make a temporary directory for the launch loop");
  std::string directory = pattern;
  std::string trace = directory + "/launch-loop.db", log = directory + "/launch-loop.log";
  Environment traced = {{"LD_PRELOAD", preload_with(library)},
                        {"APPTRACER_OUTPUT", trace},
                        {"APPTRACER_FORCE", "1"}};
  // What `record --level timing` sets.
  Environment timing = traced;
  timing.insert(timing.end(), {{"APPTRACER_KERNEL_ARGUMENTS", "off"}, {"APPTRACER_HOST_ALLOCATIONS", "off"}});
  std::vector<double> untraced_ns, full_ns, timing_ns, full_callbacks_ns, timing_callbacks_ns;
  std::string api;
  // Each run's time, and a traced run's callbacks (`callbacks`); every run
  // must have launched the same way.
  auto run = [&](const Environment& env, std::vector<double>& into, std::vector<double>* callbacks) {
    LaunchLoop loop = run_launch_loop(env, gpu, log);
    if (!api.empty() && loop.api != api) {
      throw std::runtime_error("the launch loop launched with " + loop.api + " in one run and " + api + " in another");
    }
    api = loop.api;
    into.push_back(loop.ns);
    if (callbacks) {
      // Unreadable, it only leaves the split out (fitted from every round or none).
      try {
        trace::Trace written(trace, TraceAccess::ReadOnly);
        if (double ns = loop_callbacks_ns(written); ns > 0) callbacks->push_back(ns);
      } catch (const TraceError&) {
      }
      unlink(trace.c_str());
    }
    on_sample();
  };
  // The runs' traces, their side files and the log.
  auto cleanup = [&] {
    if (DIR* listing = opendir(directory.c_str())) {
      while (dirent* entry = readdir(listing)) {
        if (entry->d_name[0] != '.') unlink((directory + "/" + entry->d_name).c_str());
      }
      closedir(listing);
    }
    rmdir(directory.c_str());
  };
  try {
    for (int round = 0; round < tracing_cost_rounds(quick); ++round) {
      run({}, untraced_ns, nullptr);
      run(traced, full_ns, &full_callbacks_ns);
      run(timing, timing_ns, &timing_callbacks_ns);
    }
  } catch (...) {
    cleanup();
    throw;
  }
  cleanup();
  model::TracingCost cost =
      model::fit_tracing_cost(gpu, std::move(untraced_ns), std::move(full_ns), std::move(timing_ns));
  cost.api = api;
  // Only where every traced run measured them: a median of some rounds
  // would stand beside medians of all.
  if (full_callbacks_ns.size() == cost.full_samples.size() &&
      timing_callbacks_ns.size() == cost.timing_samples.size()) {
    cost.fit_callbacks(std::move(full_callbacks_ns), std::move(timing_callbacks_ns));
  }
  return cost;
}

}  // namespace apptracer::links
