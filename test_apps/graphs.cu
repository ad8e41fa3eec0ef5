// CUDA graphs the tracer must see through: the same work — clear y,
// copy the input to x, y += 2x, copy y back — run kLaunches times eagerly, as
// an explicit graph, or as a stream-captured graph; and a graph whose kernel
// node is given another input between two launches. The DVDG of each graph
// mode must be that of the eager one.
//
//   graphs eager | explicit | capture | update
#include <cstring>

#include "check.h"

constexpr int kLaunches = 100;
constexpr int kN = 1 << 20;
constexpr size_t kBytes = kN * sizeof(float);

__global__ void axpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

struct Buffers {
  float *x, *y, *z, *in, *out;  // z: the other input of "update"; in, out: pinned host
};

cudaKernelNodeParams axpy_params(void** args) {
  cudaKernelNodeParams p{};
  p.func = reinterpret_cast<void*>(axpy);
  p.gridDim = dim3(kN / 256);
  p.blockDim = dim3(256);
  p.kernelParams = args;
  return p;
}

void enqueue(const Buffers& b, cudaStream_t stream) {
  CHECK(cudaMemsetAsync(b.y, 0, kBytes, stream));
  CHECK(cudaMemcpyAsync(b.x, b.in, kBytes, cudaMemcpyHostToDevice, stream));
  axpy<<<kN / 256, 256, 0, stream>>>(b.y, b.x, 2.0f, kN);
  CHECK(cudaMemcpyAsync(b.out, b.y, kBytes, cudaMemcpyDeviceToHost, stream));
}

// The same four operations as graph nodes, each depending on the one before.
cudaGraph_t build_explicit(const Buffers& b, void** args, cudaGraphNode_t* kernel) {
  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaMemsetParams clear{};
  clear.dst = b.y;
  clear.elementSize = 1;
  clear.width = kBytes;
  clear.height = 1;
  cudaGraphNode_t set, in, out;
  CHECK(cudaGraphAddMemsetNode(&set, graph, nullptr, 0, &clear));
  CHECK(cudaGraphAddMemcpyNode1D(&in, graph, &set, 1, b.x, b.in, kBytes, cudaMemcpyHostToDevice));
  cudaKernelNodeParams p = axpy_params(args);
  CHECK(cudaGraphAddKernelNode(kernel, graph, &in, 1, &p));
  CHECK(cudaGraphAddMemcpyNode1D(&out, graph, kernel, 1, b.out, b.y, kBytes,
                                 cudaMemcpyDeviceToHost));
  return graph;
}

void launch(cudaGraphExec_t exec, cudaStream_t stream, int times) {
  for (int i = 0; i < times; ++i) CHECK(cudaGraphLaunch(exec, stream));
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  Buffers b;
  CHECK(cudaMalloc(&b.x, kBytes));
  CHECK(cudaMalloc(&b.y, kBytes));
  CHECK(cudaMalloc(&b.z, kBytes));
  CHECK(cudaMallocHost(&b.in, kBytes));
  CHECK(cudaMallocHost(&b.out, kBytes));
  for (int i = 0; i < kN; ++i) b.in[i] = 1.0f;
  CHECK(cudaMemset(b.z, 0, kBytes));  // z = 0: after the update y stays 0
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float a = 2.0f;
  int n = kN;
  void* args[] = {&b.y, &b.x, &a, &n};
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  float expected = 2.0f;
  if (std::strcmp(mode, "eager") == 0) {
    for (int i = 0; i < kLaunches; ++i) enqueue(b, stream);
  } else if (std::strcmp(mode, "explicit") == 0) {
    cudaGraphNode_t kernel;
    graph = build_explicit(b, args, &kernel);
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    launch(exec, stream, kLaunches);
  } else if (std::strcmp(mode, "capture") == 0) {
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    enqueue(b, stream);
    CHECK(cudaStreamEndCapture(stream, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    launch(exec, stream, kLaunches);
  } else if (std::strcmp(mode, "update") == 0) {
    cudaGraphNode_t kernel;
    graph = build_explicit(b, args, &kernel);
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    launch(exec, stream, 1);
    void* other[] = {&b.y, &b.z, &a, &n};
    cudaKernelNodeParams p = axpy_params(other);
    CHECK(cudaGraphExecKernelNodeSetParams(exec, kernel, &p));
    launch(exec, stream, 1);
    expected = 0.0f;
  } else {
    std::fprintf(stderr, "usage: graphs eager|explicit|capture|update\n");
    return 2;
  }
  CHECK(cudaStreamSynchronize(stream));
  float result = b.out[0];
  std::printf("graphs %s: out[0] = %g\n", mode, result);
  if (exec) CHECK(cudaGraphExecDestroy(exec));
  if (graph) CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(b.x));
  CHECK(cudaFree(b.y));
  CHECK(cudaFree(b.z));
  CHECK(cudaFreeHost(b.in));
  CHECK(cudaFreeHost(b.out));
  return result == expected ? 0 : 1;
}
