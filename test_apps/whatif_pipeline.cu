// A copy / compute / copy pipeline over chunks of a large pinned array, with
// two device buffers each for input and output (chunk i uses buffer i % 2).
//
//   whatif_pipeline --streams 1   everything on one stream: copies and
//                                 kernels take turns (what `apptracer whatif
//                                 --overlap` starts from)
//   whatif_pipeline --streams 3   its multi-stream twin: HtoD, compute and
//                                 DtoH streams, ordered by events exactly as
//                                 the data requires (a chunk's input buffer
//                                 is refilled only after the kernel two
//                                 chunks back read it, its output buffer
//                                 rewritten only after it was copied out)
//   [--chunks N] [--chunk-mib M] [--work K]   K: arithmetic per element,
//                                 to make a kernel take about as long as a copy
//
// Phases as in whatif_copies.cu: set-up, the pipeline, clean-up, each ended
// by a cudaDeviceSynchronize.
#include <cstdlib>
#include <string>
#include <vector>

#include "check.h"
#include "int_options.h"
#include "relax_kernel.h"

namespace {

struct Options {
  int streams = 1;
  int chunks = 24;
  size_t chunk_bytes = size_t(8) << 20;
  int work = 2000;
};

Options parse(int argc, char** argv) {
  Options o;
  parse_int_options(argc, argv, "whatif_pipeline [--streams 1|3] [--chunks N] [--chunk-mib M] [--work K]",
                    [&o](const std::string& name, int value) {
                      if (name == "--streams" && (value == 1 || value == 3)) return o.streams = value, true;
                      if (name == "--chunks" && value > 2) return o.chunks = value, true;
                      if (name == "--chunk-mib" && value > 0) return o.chunk_bytes = size_t(value) << 20, true;
                      if (name == "--work" && value > 0) return o.work = value, true;
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
  float *host_in, *host_out, *in[2], *out[2];
  CHECK(cudaMallocHost(&host_in, total * sizeof(float)));
  CHECK(cudaMallocHost(&host_out, total * sizeof(float)));
  for (int b = 0; b < 2; ++b) {
    CHECK(cudaMalloc(&in[b], o.chunk_bytes));
    CHECK(cudaMalloc(&out[b], o.chunk_bytes));
  }
  for (size_t i = 0; i < total; ++i) host_in[i] = 1.0f;
  cudaStream_t h2d, work, d2h;
  CHECK(cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking));
  h2d = d2h = work;
  if (o.streams == 3) {
    CHECK(cudaStreamCreateWithFlags(&h2d, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&d2h, cudaStreamNonBlocking));
  }
  std::vector<cudaEvent_t> copied_in(o.chunks), computed(o.chunks), copied_out(o.chunks);
  for (int c = 0; c < o.chunks; ++c) {
    CHECK(cudaEventCreateWithFlags(&copied_in[c], cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&computed[c], cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&copied_out[c], cudaEventDisableTiming));
  }
  CHECK(cudaDeviceSynchronize());

  for (int c = 0; c < o.chunks; ++c) {
    int b = c % 2;
    bool twin = o.streams == 3;
    if (twin && c >= 2) CHECK(cudaStreamWaitEvent(h2d, computed[c - 2], 0));
    CHECK(cudaMemcpyAsync(in[b], host_in + c * count, o.chunk_bytes, cudaMemcpyHostToDevice, h2d));
    if (twin) {
      CHECK(cudaEventRecord(copied_in[c], h2d));
      CHECK(cudaStreamWaitEvent(work, copied_in[c], 0));
      if (c >= 2) CHECK(cudaStreamWaitEvent(work, copied_out[c - 2], 0));
    }
    relax<<<264, 256, 0, work>>>(in[b], out[b], count, o.work);
    if (twin) {
      CHECK(cudaEventRecord(computed[c], work));
      CHECK(cudaStreamWaitEvent(d2h, computed[c], 0));
    }
    CHECK(cudaMemcpyAsync(host_out + c * count, out[b], o.chunk_bytes, cudaMemcpyDeviceToHost, d2h));
    if (twin) CHECK(cudaEventRecord(copied_out[c], d2h));
  }
  CHECK(cudaDeviceSynchronize());

  float expected = relaxed_one(o.work);
  bool ok = host_out[0] == expected && host_out[total - 1] == expected;
  for (int c = 0; c < o.chunks; ++c) {
    CHECK(cudaEventDestroy(copied_in[c]));
    CHECK(cudaEventDestroy(computed[c]));
    CHECK(cudaEventDestroy(copied_out[c]));
  }
  if (o.streams == 3) {
    CHECK(cudaStreamDestroy(h2d));
    CHECK(cudaStreamDestroy(d2h));
  }
  CHECK(cudaStreamDestroy(work));
  for (int b = 0; b < 2; ++b) {
    CHECK(cudaFree(in[b]));
    CHECK(cudaFree(out[b]));
  }
  CHECK(cudaFreeHost(host_in));
  CHECK(cudaFreeHost(host_out));
  CHECK(cudaDeviceSynchronize());
  std::printf("whatif_pipeline: %s (%d stream(s), %d chunks of %zu MiB)\n", ok ? "ok" : "WRONG RESULT",
              o.streams, o.chunks, o.chunk_bytes >> 20);
  return ok ? 0 : 1;
}
