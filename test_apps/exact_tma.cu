// Hopper's bulk copies under `apptracer record --exact` (check_trace.py, case
// exact_tma). Four device buffers of 32 KiB, allocated in this order:
//
//   bulk_in, bulk_out      bulk_copy: each block moves its 4 KiB tile with
//                          cp.async.bulk global -> shared (an mbarrier waits
//                          for it), doubles it, and cp.async.bulk shared ->
//                          global. The sanitizer sees bulk copies: exact.
//   tensor_in, tensor_out  tensor_copy: the same through 2D tensor maps
//                          (cp.async.bulk.tensor, TMA), which the sanitizer
//                          never reports: the launch is incomplete, and its
//                          pointers not covered.
//
// Then sum_outputs, a plain kernel, reads both outputs whole and writes a
// 32 KiB result (allocated last): the sanitizer sees it whole. The host
// checks the result. Exit status 0 when it is right, 77 without a GPU of
// compute capability 9.0 or later.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "check.h"

namespace {

constexpr int kRowFloats = 256;                // a tensor map's box is at most 256 wide
constexpr int kTileRows = 4;                   // one block's tile: 4 rows, 4 KiB
constexpr int kTiles = 8;                      // blocks
constexpr int kTileFloats = kRowFloats * kTileRows;
constexpr uint32_t kTileBytes = kTileFloats * sizeof(float);
constexpr int kFloats = kTileFloats * kTiles;  // 32 KiB per buffer
constexpr int kThreads = 256;

__device__ uint32_t shared_address(const void* pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

// The barrier counts one arrival (thread 0's, announcing the tile's bytes)
// and completes when the copy has delivered them.
__device__ void init_barrier(uint64_t* barrier) {
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(barrier)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
}

__device__ void expect_tile(uint64_t* barrier) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(barrier)),
               "r"(kTileBytes)
               : "memory");
}

__device__ void wait_for_tile(uint64_t* barrier) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra WAIT;\n"
      "}\n" ::"r"(shared_address(barrier))
      : "memory");
}

// Every thread doubles its part of the tile, then makes its writes visible
// to the copy engine before thread 0 stores the tile.
__device__ void double_tile(float* tile) {
  for (int i = threadIdx.x; i < kTileFloats; i += blockDim.x) tile[i] = 2.0f * tile[i] + 1.0f;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
}

__device__ void wait_for_stores() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

__global__ void bulk_copy(const float* in, float* out) {
  __shared__ alignas(128) float tile[kTileFloats];
  __shared__ alignas(8) uint64_t barrier;
  init_barrier(&barrier);
  size_t first = size_t{blockIdx.x} * kTileFloats;
  if (threadIdx.x == 0) {
    expect_tile(&barrier);
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            shared_address(tile)),
        "l"(in + first), "r"(kTileBytes), "r"(shared_address(&barrier))
        : "memory");
  }
  wait_for_tile(&barrier);
  double_tile(tile);
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(out + first),
                 "r"(shared_address(tile)), "r"(kTileBytes)
                 : "memory");
    wait_for_stores();
  }
}

__global__ void tensor_copy(const __grid_constant__ CUtensorMap in, const __grid_constant__ CUtensorMap out) {
  __shared__ alignas(128) float tile[kTileFloats];
  __shared__ alignas(8) uint64_t barrier;
  init_barrier(&barrier);
  int row = blockIdx.x * kTileRows;
  if (threadIdx.x == 0) {
    expect_tile(&barrier);
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
        "[%0], [%1, {%2, %3}], [%4];" ::"r"(shared_address(tile)),
        "l"(reinterpret_cast<uint64_t>(&in)), "r"(0), "r"(row), "r"(shared_address(&barrier))
        : "memory");
  }
  wait_for_tile(&barrier);
  double_tile(tile);
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                     reinterpret_cast<uint64_t>(&out)),
                 "r"(0), "r"(row), "r"(shared_address(tile))
                 : "memory");
    wait_for_stores();
  }
}

__global__ void sum_outputs(const float* bulk, const float* tensor, float* sum) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < kFloats; i += gridDim.x * blockDim.x)
    sum[i] = bulk[i] + tensor[i];
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*,
                                 CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                                 CUtensorMapFloatOOBfill);

// A 2D map of a buffer: rows of 256 floats, boxes of one tile.
CUtensorMap tensor_map(EncodeTiled encode, float* buffer) {
  CUtensorMap map;
  cuuint64_t dims[2] = {kRowFloats, kFloats / kRowFloats};
  cuuint64_t strides[1] = {kRowFloats * sizeof(float)};
  cuuint32_t box[2] = {kRowFloats, kTileRows};
  cuuint32_t element_strides[2] = {1, 1};
  CUresult result = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, buffer, dims, strides, box,
                           element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                           CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    std::fprintf(stderr, "exact_tma: cuTensorMapEncodeTiled failed (%d)\n", static_cast<int>(result));
    std::exit(1);
  }
  return map;
}

}  // namespace

int main() {
  cudaDeviceProp properties;
  if (cudaGetDeviceProperties(&properties, 0) != cudaSuccess || properties.major < 9) {
    std::printf("exact_tma: needs a GPU of compute capability 9.0 or later\n");
    return 77;
  }
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found;
  CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000, cudaEnableDefault,
                                         &found));
  if (found != cudaDriverEntryPointSuccess) {
    std::fprintf(stderr, "exact_tma: the driver has no cuTensorMapEncodeTiled\n");
    return 1;
  }
  auto encode = reinterpret_cast<EncodeTiled>(entry);

  size_t bytes = kFloats * sizeof(float);
  float *bulk_in, *bulk_out, *tensor_in, *tensor_out, *sum;
  for (float** buffer : {&bulk_in, &bulk_out, &tensor_in, &tensor_out, &sum}) CHECK(cudaMalloc(buffer, bytes));
  std::vector<float> host(kFloats);
  for (int i = 0; i < kFloats; ++i) host[i] = static_cast<float>(i % 1000);
  CHECK(cudaMemcpy(bulk_in, host.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(tensor_in, host.data(), bytes, cudaMemcpyHostToDevice));

  bulk_copy<<<kTiles, kThreads>>>(bulk_in, bulk_out);
  CHECK(cudaGetLastError());
  tensor_copy<<<kTiles, kThreads>>>(tensor_map(encode, tensor_in), tensor_map(encode, tensor_out));
  CHECK(cudaGetLastError());
  sum_outputs<<<kTiles, kThreads>>>(bulk_out, tensor_out, sum);
  CHECK(cudaGetLastError());
  std::vector<float> result(kFloats);
  CHECK(cudaMemcpy(result.data(), sum, bytes, cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < kFloats; ++i) wrong += result[i] != 2.0f * (2.0f * host[i] + 1.0f);
  for (float* buffer : {bulk_in, bulk_out, tensor_in, tensor_out, sum}) CHECK(cudaFree(buffer));
  if (wrong) {
    std::printf("exact_tma: %d of %d results wrong\n", wrong, kFloats);
    return 1;
  }
  std::printf("exact_tma: ok\n");
  return 0;
}
