// vector_add through the driver API only, as JAX, Triton and CuPy launch: a
// module loaded from a fatbin, cuMemAlloc, cuMemcpyHtoD/DtoH, cuLaunchKernel.
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define DRIVER_CHECK(call)                                                          \
  do {                                                                              \
    CUresult check_result = (call);                                                 \
    if (check_result != CUDA_SUCCESS) {                                             \
      const char* message = nullptr;                                                \
      cuGetErrorString(check_result, &message);                                     \
      std::fprintf(stderr, "%s failed: %s\n", #call, message ? message : "?");      \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

int main(int, char** argv) {
  std::string self(argv[0]);
  std::string fatbin = self.substr(0, self.rfind('/') + 1) + "driver_kernels.fatbin";
  const int n = 1 << 20;
  const size_t bytes = n * sizeof(float);
  std::vector<float> a(n, 1.0f), b(n, 2.0f), s(n, 0.0f);

  DRIVER_CHECK(cuInit(0));
  CUdevice device;
  DRIVER_CHECK(cuDeviceGet(&device, 0));
  CUcontext context;
  DRIVER_CHECK(cuDevicePrimaryCtxRetain(&context, device));
  DRIVER_CHECK(cuCtxSetCurrent(context));
  CUmodule module;
  DRIVER_CHECK(cuModuleLoad(&module, fatbin.c_str()));
  CUfunction function;
  DRIVER_CHECK(cuModuleGetFunction(&function, module, "vector_add"));

  CUdeviceptr a_d, b_d, s_d;
  DRIVER_CHECK(cuMemAlloc(&a_d, bytes));
  DRIVER_CHECK(cuMemAlloc(&b_d, bytes));
  DRIVER_CHECK(cuMemAlloc(&s_d, bytes));
  DRIVER_CHECK(cuMemcpyHtoD(a_d, a.data(), bytes));
  DRIVER_CHECK(cuMemcpyHtoD(b_d, b.data(), bytes));
  int count = n;
  void* args[] = {&s_d, &a_d, &b_d, &count};
  DRIVER_CHECK(cuLaunchKernel(function, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  DRIVER_CHECK(cuMemcpyDtoH(s.data(), s_d, bytes));
  for (int i = 0; i < n; ++i) {
    if (s[i] != 3.0f) {
      std::fprintf(stderr, "driver_vector_add: wrong sum at %d\n", i);
      return 1;
    }
  }
  DRIVER_CHECK(cuMemFree(a_d));
  DRIVER_CHECK(cuMemFree(b_d));
  DRIVER_CHECK(cuMemFree(s_d));
  DRIVER_CHECK(cuModuleUnload(module));
  DRIVER_CHECK(cuDevicePrimaryCtxRelease(device));
  std::printf("driver_vector_add: %d elements correct\n", n);
  return 0;
}
