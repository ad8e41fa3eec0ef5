// A halo exchange between two GPUs, the independent pair of `whatif
// --peer-copies`: its trace staged through the host against its runs peer
// to peer. With fewer than two GPUs (or, --peer 1, GPUs that cannot reach
// each other's memory) it says so and exits 77 (skipped).
//
//   whatif_halo [--peer 0|1] [--pageable 0|1] [--iterations N] [--domain-mib M] [--halo-mib H] [--work K]
//
// Each GPU owns a domain: `in` (M MiB of floats, its last H MiB the ghost
// region the other GPU's halo arrives in) and `out`. Each iteration relaxes
// in into out on both GPUs (relax_kernel.h, a few hundred µs), then each
// GPU's halo (the first H MiB of out) goes to the other's ghost region:
//  * staged (--peer 0): the sender copies it into a host buffer (pinned, or
//    --pageable 1 malloc'd) on its stream and records an event; the
//    receiver's stream waits for the event and copies the host buffer in;
//  * --peer 1: the receiver's stream waits for the sender's kernel and
//    copies the halo in with cudaMemcpyPeerAsync, peer access enabled.
// GPUs wait for each other with events, never the host, so the work is one
// phase of whatif's periods: 1 set-up (ended by one cudaDeviceSynchronize;
// its copies are synchronous), 2 the exchange (ended by one
// cudaStreamSynchronize of GPU 0's stream, which waits for GPU 1's last
// event), then clean-up. Prints the exchange's wall time ("work_ms"),
// measured around it on the host, for runs without the tracer.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"
#include "int_options.h"
#include "relax_kernel.h"

namespace {

constexpr int kGpus = 2;

struct Options {
  bool peer = false;
  bool pageable = false;
  int iterations = 50;
  size_t domain_bytes = size_t(32) << 20;
  size_t halo_bytes = size_t(4) << 20;
  int work = 800;
};

Options parse(int argc, char** argv) {
  Options o;
  parse_int_options(argc, argv,
                    "whatif_halo [--peer 0|1] [--pageable 0|1] [--iterations N] [--domain-mib M] [--halo-mib H] "
                    "[--work K]",
                    [&o](const std::string& name, int value) {
                      if (name == "--peer" && (value == 0 || value == 1)) return o.peer = value == 1, true;
                      if (name == "--pageable" && (value == 0 || value == 1)) return o.pageable = value == 1, true;
                      if (name == "--iterations" && value >= 2) return o.iterations = value, true;
                      if (name == "--domain-mib" && value > 0) return o.domain_bytes = size_t(value) << 20, true;
                      if (name == "--halo-mib" && value > 0) return o.halo_bytes = size_t(value) << 20, true;
                      if (name == "--work" && value > 0) return o.work = value, true;
                      return false;
                    });
  if (2 * o.halo_bytes > o.domain_bytes) {
    std::fprintf(stderr, "whatif_halo: a halo is at most half the domain\n");
    std::exit(2);
  }
  return o;
}

// One GPU's part.
struct Gpu {
  float* in = nullptr;
  float* out = nullptr;
  float* staging = nullptr;  // staged: where its halo waits on the host
  cudaStream_t stream = nullptr;
  cudaEvent_t sent = nullptr;      // staged: its halo is on the host; peer: its kernel is done
  cudaEvent_t received = nullptr;  // the other GPU's halo is in its ghost region
};

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  int devices = 0;
  CHECK(cudaGetDeviceCount(&devices));
  if (devices < kGpus) {
    std::printf("whatif_halo: needs 2 GPUs, found %d\n", devices);
    return 77;
  }
  if (o.peer) {
    int forward = 0, backward = 0;
    CHECK(cudaDeviceCanAccessPeer(&forward, 0, 1));
    CHECK(cudaDeviceCanAccessPeer(&backward, 1, 0));
    if (!forward || !backward) {
      std::printf("whatif_halo: GPUs 0 and 1 cannot access each other's memory\n");
      return 77;
    }
  }
  size_t count = o.domain_bytes / sizeof(float);
  size_t halo = o.halo_bytes / sizeof(float);
  size_t ghost = count - halo;  // where the other GPU's halo goes in `in`
  std::vector<float> ones(count, 1.0f);
  Gpu gpus[kGpus];
  for (int g = 0; g < kGpus; ++g) {
    Gpu& gpu = gpus[g];
    CHECK(cudaSetDevice(g));
    CHECK(cudaMalloc(&gpu.in, o.domain_bytes));
    CHECK(cudaMalloc(&gpu.out, o.domain_bytes));
    // Synchronous: set-up ends with one synchronization (see above).
    CHECK(cudaMemcpy(gpu.in, ones.data(), o.domain_bytes, cudaMemcpyHostToDevice));
    CHECK(cudaStreamCreateWithFlags(&gpu.stream, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&gpu.sent, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&gpu.received, cudaEventDisableTiming));
    if (o.peer) {
      CHECK(cudaDeviceEnablePeerAccess(1 - g, 0));
    } else if (o.pageable) {
      gpu.staging = static_cast<float*>(std::malloc(o.halo_bytes));
      if (!gpu.staging) return 1;
      std::memset(gpu.staging, 0, o.halo_bytes);
    } else {
      CHECK(cudaMallocHost(&gpu.staging, o.halo_bytes));
    }
    // CUDA loads a kernel's module on each GPU at its first launch there:
    // loaded here, so that the phase measured is the work, not the loading.
    cudaFuncAttributes loaded;
    CHECK(cudaFuncGetAttributes(&loaded, relax));
  }
  CHECK(cudaSetDevice(0));
  CHECK(cudaDeviceSynchronize());

  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iterations; ++i) {
    for (int g = 0; g < kGpus; ++g) {
      Gpu& gpu = gpus[g];
      CHECK(cudaSetDevice(g));
      // Peer: the other GPU has copied in this GPU's previous halo.
      if (o.peer && i > 0) CHECK(cudaStreamWaitEvent(gpu.stream, gpus[1 - g].received, 0));
      relax<<<264, 256, 0, gpu.stream>>>(gpu.in, gpu.out, count, o.work);
      CHECK(cudaGetLastError());
      if (o.peer) CHECK(cudaEventRecord(gpu.sent, gpu.stream));
    }
    for (int g = 0; g < kGpus && !o.peer; ++g) {
      Gpu& gpu = gpus[g];
      CHECK(cudaSetDevice(g));
      // The other GPU has copied in the previous halo from the host buffer.
      if (i > 0) CHECK(cudaStreamWaitEvent(gpu.stream, gpus[1 - g].received, 0));
      CHECK(cudaMemcpyAsync(gpu.staging, gpu.out, o.halo_bytes, cudaMemcpyDeviceToHost, gpu.stream));
      CHECK(cudaEventRecord(gpu.sent, gpu.stream));
    }
    for (int g = 0; g < kGpus; ++g) {
      Gpu& gpu = gpus[g];
      const Gpu& other = gpus[1 - g];
      CHECK(cudaSetDevice(g));
      CHECK(cudaStreamWaitEvent(gpu.stream, other.sent, 0));
      if (o.peer) {
        CHECK(cudaMemcpyPeerAsync(gpu.in + ghost, g, other.out, 1 - g, o.halo_bytes, gpu.stream));
      } else {
        CHECK(cudaMemcpyAsync(gpu.in + ghost, other.staging, o.halo_bytes, cudaMemcpyHostToDevice, gpu.stream));
      }
      CHECK(cudaEventRecord(gpu.received, gpu.stream));
    }
  }
  CHECK(cudaSetDevice(0));
  CHECK(cudaStreamWaitEvent(gpus[0].stream, gpus[1].received, 0));
  CHECK(cudaStreamSynchronize(gpus[0].stream));
  double work_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  // The interior relaxed from ones; the ghost region from the other GPU's
  // halo, itself relaxed from ones.
  float interior = relaxed_one(o.work);
  float beside_ghost = relaxed(interior, o.work);
  bool ok = true;
  for (int g = 0; g < kGpus; ++g) {
    Gpu& gpu = gpus[g];
    float first = 0, last = 0;
    CHECK(cudaSetDevice(g));
    CHECK(cudaMemcpy(&first, gpu.out, sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&last, gpu.out + count - 1, sizeof(float), cudaMemcpyDeviceToHost));
    ok = ok && first == interior && last == beside_ghost;
    CHECK(cudaStreamDestroy(gpu.stream));
    CHECK(cudaEventDestroy(gpu.sent));
    CHECK(cudaEventDestroy(gpu.received));
    CHECK(cudaFree(gpu.in));
    CHECK(cudaFree(gpu.out));
    if (o.pageable && !o.peer) {
      std::free(gpu.staging);
    } else if (!o.peer) {
      CHECK(cudaFreeHost(gpu.staging));
    }
    CHECK(cudaDeviceSynchronize());
  }
  std::printf("whatif_halo: %s (%s, %d iterations, %zu MiB domains, %zu MiB halos)\nwork_ms %.3f\n",
              ok ? "ok" : "WRONG RESULT",
              o.peer ? "peer to peer" : o.pageable ? "staged through pageable memory" : "staged through pinned memory",
              o.iterations, o.domain_bytes >> 20, o.halo_bytes >> 20, work_ms);
  return ok ? 0 : 1;
}
