// Managed memory the host writes and a kernel then reads, round after round:
// the independent program pair for `whatif --prefetch-managed`. Its trace
// with the kernel faulting the pages in on demand against its runs that
// prefetch them to the GPU first (cudaMemPrefetchAsync on the kernel's
// stream, as the CUDA guide advises).
//
//   whatif_managed [--prefetch 0|1] [--rounds N] [--mib M] [--work K]
//
// Phases: set-up, then one per round (the host writes the input, the kernel
// reads it, cudaDeviceSynchronize), then clean-up. Each round moves the
// input's pages to the GPU (the host's writes brought them back). Prints the
// rounds' wall time ("work_ms"), measured around them on the host.
#include <chrono>
#include <cstdio>
#include <string>

#include "check.h"
#include "int_options.h"
#include "relax_kernel.h"

namespace {

struct Options {
  bool prefetch = false;
  int rounds = 6;
  size_t bytes = size_t(256) << 20;
  int work = 20;
};

Options parse(int argc, char** argv) {
  Options o;
  parse_int_options(argc, argv, "whatif_managed [--prefetch 0|1] [--rounds N] [--mib M] [--work K]",
                    [&o](const std::string& name, int value) {
                      if (name == "--prefetch" && (value == 0 || value == 1)) return o.prefetch = value == 1, true;
                      if (name == "--rounds" && value >= 1 && value <= 12) return o.rounds = value, true;
                      if (name == "--mib" && value > 0) return o.bytes = size_t(value) << 20, true;
                      if (name == "--work" && value > 0) return o.work = value, true;
                      return false;
                    });
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  int concurrent = 0;
  CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0));
  if (!concurrent) {
    std::printf("whatif_managed: device 0 has no concurrent managed access\n");
    return 77;
  }
  size_t count = o.bytes / sizeof(float);
  float *in, *out;
  CHECK(cudaMallocManaged(&in, o.bytes));
  CHECK(cudaMalloc(&out, o.bytes));
  float result = 0;
  cudaMemLocation gpu{cudaMemLocationTypeDevice, 0};
  // CUDA loads a kernel's module at its first launch: loaded here, so that
  // the phase measured is the work, not the loading.
  cudaFuncAttributes loaded;
  CHECK(cudaFuncGetAttributes(&loaded, relax));
  CHECK(cudaDeviceSynchronize());

  auto start = std::chrono::steady_clock::now();
  for (int round = 1; round <= o.rounds; ++round) {
    for (size_t i = 0; i < count; ++i) in[i] = static_cast<float>(round);
    if (o.prefetch) CHECK(cudaMemPrefetchAsync(in, o.bytes, gpu, 0, 0));
    relax<<<264, 256>>>(in, out, count, o.work);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  }
  double work_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  CHECK(cudaMemcpy(&result, out + count - 1, sizeof(float), cudaMemcpyDeviceToHost));
  float expected = static_cast<float>(o.rounds) * relaxed_one(o.work);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  CHECK(cudaDeviceSynchronize());
  bool ok = result > expected * 0.9999f && result < expected * 1.0001f;
  std::printf("whatif_managed: %s (%d rounds of %zu MiB, %s)\nwork_ms %.3f\n", ok ? "ok" : "WRONG RESULT",
              o.rounds, o.bytes >> 20, o.prefetch ? "prefetched" : "on demand", work_ms);
  return ok ? 0 : 1;
}
