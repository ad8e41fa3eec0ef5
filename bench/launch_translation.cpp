// What the tracer's own code costs a kernel launch on the program's thread
// (CPU, no GPU): a runtime launch with the driver's launch nested in it, fired
// through the tracer's callback entry point as CUPTI fires it (four
// callbacks), with CUDA's answers made up (tests/tracer/fabricated_callbacks.h)
// and a thread draining the records as the writer does. CUPTI's own share,
// and the driver's, are not in it: `links` and bench/compare.sh measure those
// on the GPU machine. Prints the median ns per launch over rounds, with and
// without reading the launch's arguments: back to back (warm caches), and
// each launch after a sweep of PROGRAM_KIB of other data (cold caches, as a
// framework's own work between launches leaves them).
//   launch_translation [LAUNCHES_PER_ROUND] [ROUNDS] [PROGRAM_KIB]
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "buffer/allocation_registry.h"
#include "buffer/record_buffers.h"
#include "buffer/string_table.h"
#include "fabricated_callbacks.h"

using namespace apptracer;

namespace {

// A kernel of four parameters: two pointers into one allocation, a count, a
// scalar, as an elementwise kernel takes them.
struct Launch {
  uint64_t out = 0x7f0000100000, in = 0x7f0000100400, count = 4096;
  float alpha = 2.0f;
  void* params[4] = {&out, &in, &count, &alpha};
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double ns_per_launch(bool read_arguments, int launches, int rounds, size_t evict_bytes) {
  RecordBuffers buffers(64 << 20);
  AllocationRegistry allocations;
  StringTable strings;
  testing::FakeCudaQueries cuda;
  cuda.strings = &strings;
  CaptureContext ctx{buffers, allocations, strings, cuda, &now_ns, nullptr};
  ctx.kernel_arguments = read_arguments;
  allocations.add(0x7f0000100000, 1 << 20, AllocKind::Device, 0, 1);
  const void* function = reinterpret_cast<const void*>(0xf00);
  LaunchedFunction& layout = cuda.functions[function];
  layout.param_offsets = {0, 8, 16, 24};
  layout.param_sizes = {8, 8, 8, 4};
  testing::CallbackFirer callbacks(ctx);

  std::atomic<bool> done{false};
  std::thread writer([&] {
    buffers.mark_writer_thread();
    while (!done.load()) {
      buffers.wait_for_work(std::chrono::milliseconds(2));
      buffers.drain([](const Record*, size_t) {});
    }
  });
  Launch launch;
  cudaLaunchKernel_v7000_params runtime{function, dim3(256), dim3(128), launch.params, 0, nullptr};
  cuLaunchKernel_params driver{(CUfunction)function, 256, 1, 1, 128, 1, 1, 0, nullptr, launch.params, nullptr};
  auto one_launch = [&] {
    callbacks.call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                   "cudaLaunchKernel", &runtime, 0, nullptr, [&] {
                     callbacks.call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                    "cuLaunchKernel", &driver);
                   });
  };
  for (int i = 0; i < launches; ++i) one_launch();  // warm-up
  std::vector<double> per_launch;
  if (evict_bytes == 0) {
    for (int round = 0; round < rounds; ++round) {
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < launches; ++i) one_launch();
      auto end = std::chrono::steady_clock::now();
      per_launch.push_back(std::chrono::duration<double, std::nano>(end - start).count() / launches);
    }
  } else {
    // Between launches a real program runs its framework's code, which
    // leaves the tracer's data out of the caches: each launch here follows
    // a sweep of a buffer larger than the caches it should miss, and only
    // the launch is timed (less what timing nothing costs).
    std::vector<uint64_t> program_data(evict_bytes / sizeof(uint64_t), 1);
    uint64_t sum = 0;
    auto sweep = [&] {
      for (size_t i = 0; i < program_data.size(); i += 8) sum += ++program_data[i];
    };
    auto timed = [&](auto&& work) {
      sweep();
      uint64_t start = now_ns();
      work();
      return now_ns() - start;
    };
    for (int round = 0; round < rounds; ++round) {
      uint64_t launched = 0, nothing = 0;
      for (int i = 0; i < launches; ++i) {
        launched += timed(one_launch);
        nothing += timed([] {});
      }
      per_launch.push_back(static_cast<double>(launched - std::min(launched, nothing)) / launches);
    }
    if (sum == 0) std::printf(" ");
  }
  done = true;
  writer.join();
  return median(per_launch);
}

}  // namespace

int main(int argc, char** argv) {
  int launches = argc > 1 ? std::atoi(argv[1]) : 20000;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 9;
  long evict_kib = argc > 3 ? std::atol(argv[3]) : 4096;
  if (launches <= 0 || rounds <= 0 || evict_kib < 0) {
    std::fprintf(stderr,
                 "usage: launch_translation [LAUNCHES_PER_ROUND] [ROUNDS] [PROGRAM_KIB] "
                 "(counts positive; PROGRAM_KIB 0 for back-to-back launches)\n");
    return 2;
  }
  struct Mode {
    const char* name;
    size_t evict_bytes;
  };
  std::vector<Mode> modes{{"warm", 0}};
  if (evict_kib > 0) modes.push_back({"cold", static_cast<size_t>(evict_kib) << 10});
  for (const Mode& mode : modes) {
    double with_arguments = ns_per_launch(true, launches, rounds, mode.evict_bytes);
    double without = ns_per_launch(false, launches, rounds, mode.evict_bytes);
    std::printf("%s caches: launch translated, arguments read: %.1f ns per launch\n", mode.name,
                with_arguments);
    std::printf("%s caches: launch translated, arguments not read: %.1f ns per launch\n", mode.name,
                without);
    std::printf("result launch_translation.%s.with_arguments_ns %.1f\n", mode.name, with_arguments);
    std::printf("result launch_translation.%s.without_arguments_ns %.1f\n", mode.name, without);
  }
  return 0;
}
