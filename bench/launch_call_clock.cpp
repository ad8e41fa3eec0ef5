// How long a program's kernel launch calls take, with or without a tracer:
// preloaded, it wraps the runtime's cudaLaunchKernel, __cudaLaunchKernel and
// cudaLaunchKernelExC (the calls PyTorch's kernels go through, by the PLT of
// libcudart) and times each with two clock reads. Preloaded beside a tracer
// (listed first), it times the call with the tracer's callbacks inside it;
// alone, the untraced call, which no tracer can show. What tracing adds to a
// real program's launch calls, next to what it adds between them, is what
// whatif must take off to price a change against the untraced program.
//
//   LD_PRELOAD=launch_call_clock.so[:libapptracer.so] PROGRAM
//
// At exit prints "launch_call_clock: N calls, median M ns, mean A ns" on
// stderr (over every call after the first BENCH_LAUNCH_SKIP, default 1000:
// start-up's first launches load modules).
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

constexpr size_t kMaxCalls = 1 << 22;
uint32_t durations_ns[kMaxCalls];  // static: no allocation on the program's path
std::atomic<size_t> calls{0};

uint64_t now_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

void note(uint64_t start) {
  uint64_t took = now_ns() - start;
  size_t slot = calls.fetch_add(1, std::memory_order_relaxed);
  if (slot < kMaxCalls) durations_ns[slot] = static_cast<uint32_t>(std::min<uint64_t>(took, UINT32_MAX));
}

// The runtime's own definition. A Python extension's libraries are loaded
// RTLD_LOCAL, out of RTLD_NEXT's reach: then the runtime the caller already
// loaded, by its soname.
template <typename Function>
Function next(const char* name) {
  if (void* found = dlsym(RTLD_NEXT, name)) return reinterpret_cast<Function>(found);
  for (const char* runtime : {"libcudart.so.13", "libcudart.so.12"}) {
    if (void* handle = dlopen(runtime, RTLD_LAZY | RTLD_NOLOAD)) {
      if (void* found = dlsym(handle, name)) return reinterpret_cast<Function>(found);
    }
  }
  fprintf(stderr, "launch_call_clock: no %s to wrap\n", name);
  abort();
}

__attribute__((destructor)) void report() {
  size_t n = std::min(calls.load(), kMaxCalls);
  const char* skip_text = getenv("BENCH_LAUNCH_SKIP");
  size_t skip = skip_text ? strtoull(skip_text, nullptr, 10) : 1000;
  if (n <= skip) {
    fprintf(stderr, "launch_call_clock: %zu calls, too few to time\n", n);
    return;
  }
  uint32_t* first = durations_ns + skip;
  size_t count = n - skip;
  double sum = 0;
  for (size_t i = 0; i < count; ++i) sum += first[i];
  std::nth_element(first, first + count / 2, first + count);
  fprintf(stderr, "launch_call_clock: %zu calls, median %u ns, mean %.0f ns\n", count,
          first[count / 2], sum / count);
}

}  // namespace

// The runtime's types, as opaque as the wrapper needs them.
struct dim3_abi {
  unsigned x, y, z;
};
using cudaError_abi = int;

namespace {

// The call, timed.
template <typename Function, typename... Args>
cudaError_abi timed(Function real, Args... args) {
  uint64_t start = now_ns();
  cudaError_abi result = real(args...);
  note(start);
  return result;
}

using LaunchFunction = cudaError_abi (*)(const void*, dim3_abi, dim3_abi, void**, size_t, void*);

}  // namespace

extern "C" __attribute__((visibility("default"))) cudaError_abi cudaLaunchKernel(
    const void* function, dim3_abi grid, dim3_abi block, void** args, size_t shared_bytes, void* stream) {
  static auto real = next<LaunchFunction>("cudaLaunchKernel");
  return timed(real, function, grid, block, args, shared_bytes, stream);
}

// What nvcc's `<<<...>>>` calls since CUDA 13 (PyTorch's kernels go through it).
extern "C" __attribute__((visibility("default"))) cudaError_abi __cudaLaunchKernel(
    const void* kernel, dim3_abi grid, dim3_abi block, void** args, size_t shared_bytes, void* stream) {
  static auto real = next<LaunchFunction>("__cudaLaunchKernel");
  return timed(real, kernel, grid, block, args, shared_bytes, stream);
}

extern "C" __attribute__((visibility("default"))) cudaError_abi cudaLaunchKernelExC(
    const void* config, const void* function, void** args) {
  static auto real = next<cudaError_abi (*)(const void*, const void*, void**)>("cudaLaunchKernelExC");
  return timed(real, config, function, args);
}
