// One bad program and its fixed twin per diagnosis of `apptracer diagnose`:
//
//   diagnose_cases SCENARIO bad|fixed [--time]
//
// The bad variant does what the diagnosis is about; the fixed one does the
// same work the way its fix says. check_trace.py (cases diag_SCENARIO_bad and
// diag_SCENARIO_fixed) asserts the finding appears for the first and not for
// the second. Exits 77 where the machine cannot show the behaviour (numa on
// a single NUMA node). With --time, also prints the scenario's own time on
// stderr ("work_ms T"), what bench/diagnose_truth.py compares.
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "check.h"

namespace {

constexpr size_t kMiB = size_t{1} << 20;

__global__ void fill(float* out, size_t n, float value) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = value;
}

__global__ void scale(float* out, const float* in, size_t n, float factor) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = in[i] * factor;
}

// Computes on each element of `in` for `rounds` steps: 4000 take about a
// millisecond on an H100 for 32 MiB.
__global__ void heavy(float* out, const float* in, size_t n, int rounds) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float v = in[i];
    for (int r = 0; r < rounds; ++r) v = v * 0.999f + 0.001f;
    out[i] = v;
  }
}

__global__ void tiny(float* out, int work) {
  if (threadIdx.x == 0 && blockIdx.x == 0)
    for (int w = 0; w < work; ++w) out[0] += 1.0f;
}

__global__ void sum(float* result, const float* in, size_t n) {
  float s = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += in[i];
  atomicAdd(result, s);
}

void launch_fill(float* out, size_t n, float value, cudaStream_t stream = 0) {
  fill<<<264, 256, 0, stream>>>(out, n, value);
  CHECK(cudaGetLastError());
}

// The host computing for `us` microseconds (no CUDA call).
void host_work(int us) {
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

void pageable(bool bad) {
  size_t bytes = 64 * kMiB;
  float* device;
  CHECK(cudaMalloc(&device, bytes));
  float* host;
  if (bad) {
    host = static_cast<float*>(std::malloc(bytes));
  } else {
    CHECK(cudaMallocHost(&host, bytes));
  }
  std::memset(host, 1, bytes);
  for (int i = 0; i < 4; ++i) CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
  if (bad) {
    std::free(host);
  } else {
    CHECK(cudaFreeHost(host));
  }
  CHECK(cudaFree(device));
}

void small_copies(bool bad) {
  size_t bytes = kMiB, piece = 4096;
  float *host, *device;
  CHECK(cudaMallocHost(&host, bytes));
  CHECK(cudaMalloc(&device, bytes));
  std::memset(host, 0, bytes);
  if (bad) {
    for (size_t offset = 0; offset < bytes / 4; offset += piece) {
      CHECK(cudaMemcpyAsync(reinterpret_cast<char*>(device) + offset,
                            reinterpret_cast<char*>(host) + offset, piece, cudaMemcpyHostToDevice));
    }
  } else {
    CHECK(cudaMemcpyAsync(device, host, bytes / 4, cudaMemcpyHostToDevice));
  }
  // A large copy on the same path: the trace measures the path's bandwidth.
  CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFreeHost(host));
  CHECK(cudaFree(device));
}

void sync_copy(bool bad) {
  size_t bytes = 16 * kMiB;
  float *host, *device;
  CHECK(cudaMallocHost(&host, bytes));
  CHECK(cudaMalloc(&device, bytes));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  for (int i = 0; i < 8; ++i) {
    if (bad) {
      CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
    } else {
      CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
    }
    host_work(300);
  }
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFreeHost(host));
  CHECK(cudaFree(device));
}

// Both variants set managed memory, whose cudaMemset blocks the host (its
// Async form does not): they differ only in that call, as the fix says.
void sync_memset(bool bad) {
  size_t bytes = 256 * kMiB;
  float* memory;
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  CHECK(cudaMallocManaged(&memory, bytes));
  for (int i = 0; i < 8; ++i) {
    if (bad) {
      CHECK(cudaMemset(memory, i, bytes));
    } else {
      CHECK(cudaMemsetAsync(memory, i, bytes, stream));
    }
    host_work(300);
  }
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(memory));
}

void redundant(bool bad) {
  size_t n = 4 * kMiB / sizeof(float), bytes = n * sizeof(float);
  float *weights_h, *weights_d, *out_d, *out_h;
  CHECK(cudaMallocHost(&weights_h, bytes));
  CHECK(cudaMallocHost(&out_h, bytes));
  CHECK(cudaMalloc(&weights_d, bytes));
  CHECK(cudaMalloc(&out_d, bytes));
  for (size_t i = 0; i < n; ++i) weights_h[i] = 1.0f;
  if (!bad) CHECK(cudaMemcpy(weights_d, weights_h, bytes, cudaMemcpyHostToDevice));
  for (int step = 0; step < 4; ++step) {
    // Bad: the unchanged weights uploaded again every step.
    if (bad) CHECK(cudaMemcpy(weights_d, weights_h, bytes, cudaMemcpyHostToDevice));
    scale<<<264, 256>>>(out_d, weights_d, n, 2.0f);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out_h, out_d, bytes, cudaMemcpyDeviceToHost));
    // Bad: the result copied back to the device, which still holds it.
    if (bad) CHECK(cudaMemcpy(out_d, out_h, bytes, cudaMemcpyHostToDevice));
    scale<<<264, 256>>>(out_d, out_d, n, 1.0f);  // works on the result in place
    CHECK(cudaGetLastError());
  }
  CHECK(cudaMemcpy(out_h, out_d, bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaFreeHost(weights_h));
  CHECK(cudaFreeHost(out_h));
  CHECK(cudaFree(weights_d));
  CHECK(cudaFree(out_d));
}

// Double-buffered input: while batch i is computed, batch i+1 is uploaded.
// Bad: the uploads wait in line on the compute stream; fixed: their own stream.
void no_overlap(bool bad) {
  size_t n = 32 * kMiB / sizeof(float), bytes = n * sizeof(float);
  float *host, *out;
  float* in[2];
  CHECK(cudaMallocHost(&host, bytes));
  std::memset(host, 0, bytes);
  CHECK(cudaMalloc(&in[0], bytes));
  CHECK(cudaMalloc(&in[1], bytes));
  CHECK(cudaMalloc(&out, bytes));
  cudaStream_t compute, copies;
  CHECK(cudaStreamCreate(&compute));
  CHECK(cudaStreamCreate(&copies));
  cudaEvent_t uploaded[2], consumed[2];
  for (int b = 0; b < 2; ++b) {
    CHECK(cudaEventCreateWithFlags(&uploaded[b], cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&consumed[b], cudaEventDisableTiming));
  }
  cudaStream_t upload = bad ? compute : copies;
  CHECK(cudaMemcpyAsync(in[0], host, bytes, cudaMemcpyHostToDevice, upload));
  CHECK(cudaEventRecord(uploaded[0], upload));
  for (int i = 0; i < 8; ++i) {
    int now = i % 2, next = (i + 1) % 2;
    CHECK(cudaStreamWaitEvent(compute, uploaded[now]));
    heavy<<<264, 256, 0, compute>>>(out, in[now], n, 4000);  // about 1 ms
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(consumed[now], compute));
    if (i + 1 < 8) {
      if (i > 0) CHECK(cudaStreamWaitEvent(upload, consumed[next]));
      CHECK(cudaMemcpyAsync(in[next], host, bytes, cudaMemcpyHostToDevice, upload));
      CHECK(cudaEventRecord(uploaded[next], upload));
    }
  }
  CHECK(cudaMemcpyAsync(host, out, bytes, cudaMemcpyDeviceToHost, compute));
  CHECK(cudaStreamSynchronize(compute));
  for (int b = 0; b < 2; ++b) {
    CHECK(cudaEventDestroy(uploaded[b]));
    CHECK(cudaEventDestroy(consumed[b]));
    CHECK(cudaFree(in[b]));
  }
  CHECK(cudaStreamDestroy(compute));
  CHECK(cudaStreamDestroy(copies));
  CHECK(cudaFreeHost(host));
  CHECK(cudaFree(out));
}

void sync_api(bool bad) {
  size_t n = 32 * kMiB / sizeof(float);
  float *in, *out;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  launch_fill(in, n, 1.0f);
  for (int i = 0; i < 20; ++i) {
    heavy<<<264, 256>>>(out, in, n, 50);
    CHECK(cudaGetLastError());
    // Bad: wait for the GPU every step, then prepare the next one.
    if (bad) CHECK(cudaDeviceSynchronize());
    host_work(200);
  }
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
}

void gpu_gap(bool bad) {
  size_t n = kMiB;
  float* data;
  CHECK(cudaMalloc(&data, n * sizeof(float)));
  // Fixed: the CPU work happens before the GPU work is queued.
  if (!bad) host_work(20000);
  launch_fill(data, n, 1.0f);
  if (bad) host_work(20000);  // Bad: the GPU waits while the CPU works.
  launch_fill(data, n, 2.0f);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(data));
}

void churn(bool bad) {
  size_t bytes = 4 * kMiB;
  float *device = nullptr, *pinned = nullptr;
  if (!bad) {
    CHECK(cudaMalloc(&device, bytes));
    CHECK(cudaMallocHost(&pinned, bytes));
  }
  for (int i = 0; i < 10; ++i) {
    if (bad) {
      CHECK(cudaMalloc(&device, bytes));
      CHECK(cudaMallocHost(&pinned, bytes));
    }
    launch_fill(device, bytes / sizeof(float), static_cast<float>(i));
    CHECK(cudaMemcpy(pinned, device, bytes, cudaMemcpyDeviceToHost));
    if (bad) {
      CHECK(cudaFree(device));
      CHECK(cudaFreeHost(pinned));
    }
  }
  if (!bad) {
    CHECK(cudaFree(device));
    CHECK(cudaFreeHost(pinned));
  }
}

void launch_bound(bool bad) {
  float* counter;
  CHECK(cudaMalloc(&counter, sizeof(float)));
  CHECK(cudaMemset(counter, 0, sizeof(float)));
  if (bad) {
    for (int i = 0; i < 2000; ++i) tiny<<<1, 32>>>(counter, 1);
  } else {
    tiny<<<1, 32>>>(counter, 2000);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(counter));
}

void uninitialized(bool bad) {
  size_t n = kMiB;
  float *in, *out;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  if (!bad) CHECK(cudaMemset(in, 0, n * sizeof(float)));
  scale<<<264, 256>>>(out, in, n, 2.0f);
  CHECK(cudaGetLastError());
  std::vector<float> result(n);
  CHECK(cudaMemcpy(result.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
}

void never_read(bool bad) {
  size_t n = 4 * kMiB / sizeof(float), bytes = n * sizeof(float);
  std::vector<float> host(n, 1.0f), result(n);
  float *table, *out;
  CHECK(cudaMalloc(&table, bytes));
  CHECK(cudaMalloc(&out, bytes));
  CHECK(cudaMemcpy(table, host.data(), bytes, cudaMemcpyHostToDevice));
  // Bad: the uploaded table is never used; fixed: the kernel reads it.
  scale<<<264, 256>>>(out, bad ? out : table, n, 2.0f);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(result.data(), out, bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(table));
  CHECK(cudaFree(out));
}

void never_used(bool bad) {
  size_t n = kMiB;
  float *data, *spare = nullptr;
  CHECK(cudaMalloc(&data, n * sizeof(float)));
  if (bad) CHECK(cudaMalloc(&spare, 16 * kMiB));
  launch_fill(data, n, 1.0f);
  std::vector<float> result(n);
  CHECK(cudaMemcpy(result.data(), data, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(data));
  if (bad) CHECK(cudaFree(spare));
}

void um_faults(bool bad) {
  size_t n = 256 * kMiB / sizeof(float);
  float *data, *result;
  CHECK(cudaMallocManaged(&data, n * sizeof(float)));
  CHECK(cudaMalloc(&result, sizeof(float)));
  CHECK(cudaMemset(result, 0, sizeof(float)));
  for (size_t i = 0; i < n; ++i) data[i] = 1.0f;
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  if (!bad) {
    cudaMemLocation device{cudaMemLocationTypeDevice, 0};
    CHECK(cudaMemPrefetchAsync(data, n * sizeof(float), device, 0, stream));
  }
  sum<<<264, 256, 0, stream>>>(result, data, n);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));
  CHECK(cudaFree(result));
}

void um_thrash(bool bad) {
  size_t n = 64 * kMiB / sizeof(float);
  float *data, *result;
  CHECK(cudaMallocManaged(&data, n * sizeof(float)));
  CHECK(cudaMalloc(&result, sizeof(float)));
  CHECK(cudaMemset(result, 0, sizeof(float)));  // sum adds to it
  for (size_t i = 0; i < n; ++i) data[i] = 1.0f;
  // Fixed: both sides only read it, so each keeps a copy.
  if (!bad) CHECK(cudaMemAdvise(data, n * sizeof(float), cudaMemAdviseSetReadMostly, cudaMemLocation{cudaMemLocationTypeDevice, 0}));
  double total = 0;
  for (int round = 0; round < 4; ++round) {
    sum<<<264, 256>>>(result, data, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    for (size_t i = 0; i < n; i += 1024) total += data[i];  // the CPU reads it back
  }
  std::printf("um_thrash: %.0f\n", total);
  CHECK(cudaFree(data));
  CHECK(cudaFree(result));
}

// The NUMA node closest to GPU 0, from sysfs; -1 when unknown.
int gpu_numa_node() {
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, 0) != cudaSuccess) return -1;
  std::string id(bus);
  for (char& c : id) c = static_cast<char>(std::tolower(c));
  std::ifstream file("/sys/bus/pci/devices/" + id + "/numa_node");
  int node = -1;
  file >> node;
  return node;
}

int numa_nodes() {
  int count = 0;
  while (access(("/sys/devices/system/node/node" + std::to_string(count)).c_str(), F_OK) == 0) ++count;
  return count;
}

int numa(bool bad) {
  int near = gpu_numa_node();
  if (near < 0 || numa_nodes() < 2) {
    std::printf("numa: needs a GPU with a known NUMA node and two nodes (here: node %d, %d nodes)\n",
                near, numa_nodes());
    return 77;
  }
  int node = bad ? (near + 1) % numa_nodes() : near;
  size_t bytes = 64 * kMiB;
  void* host = aligned_alloc(4096, bytes);
  unsigned long mask = 1ul << node;
  // mbind(MPOL_BIND = 2) before first touch places the pages on `node`.
  if (syscall(SYS_mbind, host, bytes, 2, &mask, sizeof mask * 8, 0) != 0) {
    std::printf("numa: mbind failed\n");
    return 77;
  }
  std::memset(host, 1, bytes);
  CHECK(cudaHostRegister(host, bytes, cudaHostRegisterDefault));
  float* device;
  CHECK(cudaMalloc(&device, bytes));
  for (int i = 0; i < 4; ++i) CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaHostUnregister(host));
  std::free(host);
  CHECK(cudaFree(device));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, std::function<int(bool)>> scenarios = {
      {"pageable", [](bool bad) { pageable(bad); return 0; }},
      {"small_copies", [](bool bad) { small_copies(bad); return 0; }},
      {"sync_copy", [](bool bad) { sync_copy(bad); return 0; }},
      {"sync_memset", [](bool bad) { sync_memset(bad); return 0; }},
      {"redundant", [](bool bad) { redundant(bad); return 0; }},
      {"no_overlap", [](bool bad) { no_overlap(bad); return 0; }},
      {"sync_api", [](bool bad) { sync_api(bad); return 0; }},
      {"gpu_gap", [](bool bad) { gpu_gap(bad); return 0; }},
      {"churn", [](bool bad) { churn(bad); return 0; }},
      {"launch_bound", [](bool bad) { launch_bound(bad); return 0; }},
      {"uninitialized", [](bool bad) { uninitialized(bad); return 0; }},
      {"never_read", [](bool bad) { never_read(bad); return 0; }},
      {"never_used", [](bool bad) { never_used(bad); return 0; }},
      {"um_faults", [](bool bad) { um_faults(bad); return 0; }},
      {"um_thrash", [](bool bad) { um_thrash(bad); return 0; }},
      {"numa", numa},
  };
  bool timed = argc == 4 && std::strcmp(argv[3], "--time") == 0;
  auto found = argc == 3 || timed ? scenarios.find(argv[1]) : scenarios.end();
  if (found == scenarios.end() || (std::strcmp(argv[2], "bad") != 0 && std::strcmp(argv[2], "fixed") != 0)) {
    std::fprintf(stderr, "usage: diagnose_cases SCENARIO bad|fixed [--time]\n");
    return 2;
  }
  // The scenario's own time, without CUDA's start-up: what a fix saves is
  // measured against it.
  CHECK(cudaFree(nullptr));
  auto start = std::chrono::steady_clock::now();
  int status = found->second(std::strcmp(argv[2], "bad") == 0);
  CHECK(cudaDeviceSynchronize());
  std::chrono::duration<double, std::milli> work = std::chrono::steady_clock::now() - start;
  if (status == 0) {
    std::printf("%s %s: done\n", argv[1], argv[2]);
    if (timed) std::fprintf(stderr, "work_ms %.3f\n", work.count());
  }
  return status;
}
