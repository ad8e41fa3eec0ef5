// A chunked copy / compute / copy pipeline written the way programs usually
// write it, unlike whatif_pipeline's buffer pairs: one device buffer in and
// one out, as large as the whole array, and chunk i's kernel given both at
// i * chunk. Chunk i goes on stream i % STREAMS, in order on that stream (a
// stream's copy in, kernel and copy out take turns; streams run beside each
// other). The independent program `whatif` must predict: its trace on one
// stream (or pageable) against its runs on several (or pinned).
//
//   whatif_chunked [--streams N] [--pageable 0|1] [--chunks N] [--chunk-mib M] [--work K]
//                  [--touch-out 0|1]
//
// --touch-out 0 leaves the pageable output array as malloc gave it, never
// touched, as a program writing results into a new buffer does: each copy
// out then pays the first touch of its pages.
//
// Phases as in whatif_copies.cu: set-up, the pipeline, clean-up, each ended
// by a cudaDeviceSynchronize. Prints the pipeline's wall time ("work_ms"),
// measured around it on the host, for runs without the tracer.
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.h"
#include "int_options.h"
#include "relax_kernel.h"

namespace {

struct Options {
  int streams = 1;
  bool pageable = false;
  int chunks = 12;
  size_t chunk_bytes = size_t(19) << 20;
  int work = 400;
  bool touch_out = true;
};

Options parse(int argc, char** argv) {
  Options o;
  parse_int_options(argc, argv,
                    "whatif_chunked [--streams N] [--pageable 0|1] [--chunks N] [--chunk-mib M] [--work K] "
                    "[--touch-out 0|1]",
                    [&o](const std::string& name, int value) {
                      if (name == "--streams" && value >= 1 && value <= 16) return o.streams = value, true;
                      if (name == "--pageable" && (value == 0 || value == 1)) return o.pageable = value == 1, true;
                      if (name == "--chunks" && value > 2) return o.chunks = value, true;
                      if (name == "--chunk-mib" && value > 0) return o.chunk_bytes = size_t(value) << 20, true;
                      if (name == "--work" && value > 0) return o.work = value, true;
                      if (name == "--touch-out" && (value == 0 || value == 1)) return o.touch_out = value == 1, true;
                      return false;
                    });
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  size_t count = o.chunk_bytes / sizeof(float);
  size_t total = count * o.chunks;
  CHECK(cudaFree(nullptr));
  float *host_in, *host_out, *in, *out;
  if (o.pageable) {
    host_in = static_cast<float*>(std::malloc(total * sizeof(float)));
    host_out = static_cast<float*>(std::malloc(total * sizeof(float)));
    if (!host_in || !host_out) return 1;
  } else {
    CHECK(cudaMallocHost(&host_in, total * sizeof(float)));
    CHECK(cudaMallocHost(&host_out, total * sizeof(float)));
  }
  CHECK(cudaMalloc(&in, total * sizeof(float)));
  CHECK(cudaMalloc(&out, total * sizeof(float)));
  // A copy into never-touched pageable memory also pays its first-touch page
  // faults: the output is touched unless --touch-out 0 asks for them.
  for (size_t i = 0; i < total; ++i) host_in[i] = 1.0f;
  if (o.touch_out) for (size_t i = 0; i < total; ++i) host_out[i] = 0.0f;
  std::vector<cudaStream_t> streams(o.streams);
  for (cudaStream_t& s : streams) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // CUDA loads a kernel's module at its first launch: loaded here, so that
  // the phase measured is the work, not the loading.
  cudaFuncAttributes loaded;
  CHECK(cudaFuncGetAttributes(&loaded, relax));
  CHECK(cudaDeviceSynchronize());

  auto start = std::chrono::steady_clock::now();
  for (int c = 0; c < o.chunks; ++c) {
    cudaStream_t s = streams[c % o.streams];
    size_t at = c * count;
    CHECK(cudaMemcpyAsync(in + at, host_in + at, o.chunk_bytes, cudaMemcpyHostToDevice, s));
    relax<<<264, 256, 0, s>>>(in + at, out + at, count, o.work);
    CHECK(cudaMemcpyAsync(host_out + at, out + at, o.chunk_bytes, cudaMemcpyDeviceToHost, s));
  }
  CHECK(cudaDeviceSynchronize());
  double work_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  float expected = relaxed_one(o.work);
  bool ok = host_out[0] == expected && host_out[total - 1] == expected;
  for (cudaStream_t s : streams) CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  if (o.pageable) {
    std::free(host_in);
    std::free(host_out);
  } else {
    CHECK(cudaFreeHost(host_in));
    CHECK(cudaFreeHost(host_out));
  }
  CHECK(cudaDeviceSynchronize());
  std::printf("whatif_chunked: %s (%d stream(s), %s, %d chunks of %zu MiB)\nwork_ms %.3f\n",
              ok ? "ok" : "WRONG RESULT", o.streams, o.pageable ? "pageable" : "pinned", o.chunks,
              o.chunk_bytes >> 20, work_ms);
  return ok ? 0 : 1;
}
