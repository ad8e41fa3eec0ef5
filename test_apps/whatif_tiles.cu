// A tiled pipeline written the way a program not tuned for apptracer might
// be: tiles of uneven sizes (2 to 40 MiB), per tile a copy in, two kernels
// and a copy out; host buffers malloc'ed and touched, then page-locked in
// place with cudaHostRegister (or left pageable); the end timed by an event
// recorded on the legacy default stream and cudaEventSynchronize, which
// waits for the blocking streams' work before it. Each tile has its own
// region of the device buffers, so only its own copies and kernels order it.
//
//   whatif_tiles [--registered 0|1] [--twin 0|1] [--tiles N] [--work K]
//
// --twin 0: everything on one blocking stream (cudaStreamCreate): copies and
//   kernels take turns (what `apptracer whatif --overlap` starts from).
// --twin 1: the overlapped twin: copies in on one stream, kernels on a
//   second, copies out on a third (all blocking), a tile's kernels after its
//   copy in and its copy out after its kernels, ordered by events.
// --registered 0: pageable host buffers (what `whatif --pin` starts from).
//
// Phases as in whatif_copies.cu: set-up (ended by a cudaDeviceSynchronize),
// the pipeline (ended by the legacy stream's event), clean-up. Prints the
// pipeline's wall time ("work_ms"), measured around it on the host, for runs
// without the tracer.
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.h"
#include "int_options.h"
#include "relax_kernel.h"

namespace {

// Tile sizes in MiB, taken in turn.
constexpr int kTileMiB[] = {4, 24, 8, 32, 2, 16, 40, 12};
constexpr int kSizes = sizeof kTileMiB / sizeof kTileMiB[0];

struct Options {
  bool registered = true;
  bool twin = false;
  int tiles = kSizes;
  int work = 1000;
};

Options parse(int argc, char** argv) {
  Options o;
  parse_int_options(argc, argv, "whatif_tiles [--registered 0|1] [--twin 0|1] [--tiles N] [--work K]",
                    [&o](const std::string& name, int value) {
                      if (name == "--registered" && (value == 0 || value == 1)) return o.registered = value == 1, true;
                      if (name == "--twin" && (value == 0 || value == 1)) return o.twin = value == 1, true;
                      if (name == "--tiles" && value > 0 && value <= 64) return o.tiles = value, true;
                      if (name == "--work" && value > 0) return o.work = value, true;
                      return false;
                    });
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  std::vector<size_t> first(o.tiles), count(o.tiles);
  size_t total = 0;
  for (int t = 0; t < o.tiles; ++t) {
    first[t] = total;
    count[t] = (size_t(kTileMiB[t % kSizes]) << 20) / sizeof(float);
    total += count[t];
  }
  size_t bytes = total * sizeof(float);
  CHECK(cudaFree(nullptr));
  auto* host_in = static_cast<float*>(std::malloc(bytes));
  auto* host_out = static_cast<float*>(std::malloc(bytes));
  if (!host_in || !host_out) return 1;
  for (size_t i = 0; i < total; ++i) host_in[i] = 1.0f;
  for (size_t i = 0; i < total; ++i) host_out[i] = 0.0f;
  if (o.registered) {
    CHECK(cudaHostRegister(host_in, bytes, cudaHostRegisterDefault));
    CHECK(cudaHostRegister(host_out, bytes, cudaHostRegisterDefault));
  }
  float *in, *mid, *out;
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMalloc(&mid, bytes));
  CHECK(cudaMalloc(&out, bytes));
  cudaStream_t h2d, work, d2h;
  CHECK(cudaStreamCreate(&work));
  h2d = d2h = work;
  if (o.twin) {
    CHECK(cudaStreamCreate(&h2d));
    CHECK(cudaStreamCreate(&d2h));
  }
  std::vector<cudaEvent_t> copied_in(o.tiles), computed(o.tiles);
  for (int t = 0; t < o.tiles; ++t) {
    CHECK(cudaEventCreateWithFlags(&copied_in[t], cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&computed[t], cudaEventDisableTiming));
  }
  cudaEvent_t done;
  CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  // CUDA loads a kernel's module at its first launch: loaded here, so that
  // the phase measured is the work, not the loading.
  cudaFuncAttributes loaded;
  CHECK(cudaFuncGetAttributes(&loaded, relax));
  CHECK(cudaDeviceSynchronize());

  auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < o.tiles; ++t) {
    size_t at = first[t], n = count[t];
    CHECK(cudaMemcpyAsync(in + at, host_in + at, n * sizeof(float), cudaMemcpyHostToDevice, h2d));
    if (o.twin) {
      CHECK(cudaEventRecord(copied_in[t], h2d));
      CHECK(cudaStreamWaitEvent(work, copied_in[t], 0));
    }
    relax<<<264, 256, 0, work>>>(in + at, mid + at, n, o.work);
    relax<<<264, 256, 0, work>>>(mid + at, out + at, n, o.work);
    if (o.twin) {
      CHECK(cudaEventRecord(computed[t], work));
      CHECK(cudaStreamWaitEvent(d2h, computed[t], 0));
    }
    CHECK(cudaMemcpyAsync(host_out + at, out + at, n * sizeof(float), cudaMemcpyDeviceToHost, d2h));
  }
  // The legacy default stream (0): its event comes after every blocking
  // stream's work before it.
  CHECK(cudaEventRecord(done, 0));
  CHECK(cudaEventSynchronize(done));
  double work_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  float expected = relaxed(relaxed_one(o.work), o.work);
  bool ok = true;
  for (int t = 0; t < o.tiles; ++t) {
    ok &= host_out[first[t]] == expected && host_out[first[t] + count[t] - 1] == expected;
  }
  for (int t = 0; t < o.tiles; ++t) {
    CHECK(cudaEventDestroy(copied_in[t]));
    CHECK(cudaEventDestroy(computed[t]));
  }
  CHECK(cudaEventDestroy(done));
  if (o.twin) {
    CHECK(cudaStreamDestroy(h2d));
    CHECK(cudaStreamDestroy(d2h));
  }
  CHECK(cudaStreamDestroy(work));
  CHECK(cudaFree(in));
  CHECK(cudaFree(mid));
  CHECK(cudaFree(out));
  if (o.registered) {
    CHECK(cudaHostUnregister(host_in));
    CHECK(cudaHostUnregister(host_out));
  }
  std::free(host_in);
  std::free(host_out);
  CHECK(cudaDeviceSynchronize());
  std::printf("whatif_tiles: %s (%s, %s, %d tiles, %zu MiB)\nwork_ms %.3f\n", ok ? "ok" : "WRONG RESULT",
              o.registered ? "registered" : "pageable", o.twin ? "overlapped twin" : "one stream", o.tiles,
              bytes >> 20, work_ms);
  return ok ? 0 : 1;
}
