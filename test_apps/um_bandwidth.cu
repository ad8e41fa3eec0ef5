// Managed-memory bandwidth. The host fills an array of cudaMallocManaged
// memory (first touch on the CPU), then runs a kernel over all of it N times,
// reading it (a reduction) or writing it, and prints GiB/s per run. Advice and
// prefetching change where the pages live and how they move; its trace's
// um_events, mem_advice and prefetch rows show how.
//
//   um_bandwidth [--size BYTES[K|M|G]] [--mode read|write]
//                [--advice none|accessed-by|preferred-cpu|both|read-mostly]
//                [--prefetch] [--runs N] [--oversubscribe]
//
// Exits 1 on a wrong result, 2 on bad arguments, 77 where the GPU cannot
// share managed memory with the host concurrently (advice and prefetching
// need it).
#include <cstdint>
#include <cstring>
#include <string>

#include "check.h"

namespace {

constexpr int kSkipped = 77;
constexpr size_t kPrefetchTile = 16u << 20;
constexpr int kDevice = 0;

// The reduction's total: a managed variable, so the host reads it directly.
__managed__ unsigned long long g_sum;

__host__ __device__ uint32_t initial_value(size_t i) { return static_cast<uint32_t>(i * 2654435761u); }
__host__ __device__ uint32_t written_value(size_t i, int run) {
  return static_cast<uint32_t>(i) + static_cast<uint32_t>(run);
}

// 16-byte loads and stores, grid-stride, so one launch streams the whole array.
__global__ void read_all(const uint4* data, size_t count) {
  unsigned long long sum = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    uint4 v = data[i];
    sum += static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(&g_sum, sum);
}

__global__ void write_all(uint4* data, size_t count, int run) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    size_t e = 4 * i;
    data[i] = make_uint4(written_value(e, run), written_value(e + 1, run),
                         written_value(e + 2, run), written_value(e + 3, run));
  }
}

struct Options {
  size_t bytes = size_t(1) << 30;
  bool write = false;
  std::string advice = "none";
  bool prefetch = false;
  int runs = 5;
  bool oversubscribe = false;
};

bool parse_size(const char* text, size_t& bytes) {
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  switch (*end) {
    case 'K': value <<= 10; ++end; break;
    case 'M': value <<= 20; ++end; break;
    case 'G': value <<= 30; ++end; break;
    default: break;
  }
  bytes = value;
  return *end == '\0' && value > 0 && value % sizeof(uint4) == 0;
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--prefetch") {
      o.prefetch = true;
    } else if (arg == "--oversubscribe") {
      o.oversubscribe = true;
    } else if (!value) {
      return false;
    } else if (arg == "--size") {
      if (!parse_size(value, o.bytes)) return false;
      ++i;
    } else if (arg == "--mode") {
      if (std::strcmp(value, "read") != 0 && std::strcmp(value, "write") != 0) return false;
      o.write = std::strcmp(value, "write") == 0;
      ++i;
    } else if (arg == "--advice") {
      o.advice = value;
      if (o.advice != "none" && o.advice != "accessed-by" && o.advice != "preferred-cpu" &&
          o.advice != "both" && o.advice != "read-mostly") {
        return false;
      }
      ++i;
    } else if (arg == "--runs") {
      o.runs = std::atoi(value);
      if (o.runs < 1) return false;
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

cudaMemLocation gpu() { return {cudaMemLocationTypeDevice, kDevice}; }
cudaMemLocation host() { return {cudaMemLocationTypeHost, 0}; }

void advise(const Options& o, void* data) {
  if (o.advice == "preferred-cpu" || o.advice == "both") {
    CHECK(cudaMemAdvise(data, o.bytes, cudaMemAdviseSetPreferredLocation, host()));
  }
  if (o.advice == "accessed-by" || o.advice == "both") {
    CHECK(cudaMemAdvise(data, o.bytes, cudaMemAdviseSetAccessedBy, gpu()));
  }
  if (o.advice == "read-mostly") {
    CHECK(cudaMemAdvise(data, o.bytes, cudaMemAdviseSetReadMostly, gpu()));  // location ignored
  }
}

// In tiles, the way applications overlap prefetching with other work.
void prefetch_to_gpu(const Options& o, char* data) {
  for (size_t offset = 0; offset < o.bytes; offset += kPrefetchTile) {
    size_t tile = o.bytes - offset < kPrefetchTile ? o.bytes - offset : kPrefetchTile;
    CHECK(cudaMemPrefetchAsync(data + offset, tile, gpu(), 0, 0));
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: um_bandwidth [--size BYTES[K|M|G]] (a multiple of 16) [--mode read|write]\n"
                 "       [--advice none|accessed-by|preferred-cpu|both|read-mostly] [--prefetch]\n"
                 "       [--runs N] [--oversubscribe]\n");
    return 2;
  }
  int concurrent = 0, sms = 0;
  CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, kDevice));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, kDevice));
  if (!concurrent) {
    std::printf("um_bandwidth: device %d has no concurrent managed access\n", kDevice);
    return kSkipped;
  }
  size_t free_bytes = 0, total_bytes = 0;
  CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (o.bytes > total_bytes && !o.oversubscribe) {
    std::fprintf(stderr, "um_bandwidth: %zu bytes exceed the device's %zu; pass --oversubscribe\n",
                 o.bytes, total_bytes);
    return 2;
  }

  size_t count = o.bytes / sizeof(uint32_t);
  uint32_t* data = nullptr;
  CHECK(cudaMallocManaged(&data, o.bytes));
  unsigned long long expected_sum = 0;
  for (size_t i = 0; i < count; ++i) {
    data[i] = initial_value(i);
    expected_sum += data[i];
  }
  advise(o, data);

  std::printf("um_bandwidth: %zu bytes, %s, advice %s, prefetch %s, %d runs\n", o.bytes,
              o.write ? "write" : "read", o.advice.c_str(), o.prefetch ? "on" : "off", o.runs);
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  size_t vectors = o.bytes / sizeof(uint4);
  int blocks = sms * 8, threads = 256;
  for (int run = 1; run <= o.runs; ++run) {
    if (o.prefetch) prefetch_to_gpu(o, reinterpret_cast<char*>(data));
    g_sum = 0;
    CHECK(cudaEventRecord(start));
    if (o.write) {
      write_all<<<blocks, threads>>>(reinterpret_cast<uint4*>(data), vectors, run);
    } else {
      read_all<<<blocks, threads>>>(reinterpret_cast<const uint4*>(data), vectors);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    // Timing lines start with "um_bandwidth: run " (check_trace.py ignores them).
    std::printf("um_bandwidth: run %d: %.2f GiB/s (%.3f ms)\n", run,
                o.bytes / double(1 << 30) / (ms / 1e3), ms);
    if (!o.write && g_sum != expected_sum) {
      std::fprintf(stderr, "um_bandwidth: run %d read a sum of %llu, expected %llu\n", run, g_sum,
                   expected_sum);
      return 1;
    }
  }
  if (o.write) {
    for (size_t i = 0; i < count; ++i) {
      if (data[i] != written_value(i, o.runs)) {
        std::fprintf(stderr, "um_bandwidth: element %zu is %u, expected %u\n", i, data[i],
                     written_value(i, o.runs));
        return 1;
      }
    }
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(data));
  std::printf("um_bandwidth: results correct\n");
  return 0;
}
