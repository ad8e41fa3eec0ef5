#include "analyzer/links/cuda_driver.h"

#include <dlfcn.h>

namespace apptracer::links {

namespace {

// The ABI the functions are fetched at: cuda.h's signatures are CUDA 13's.
constexpr int kCudaVersion = 13000;

CudaDriver load() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW);
  if (!library) {
    throw DriverError("no CUDA driver here (libcuda.so.1 cannot be loaded): nothing to measure");
  }
  using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                      CUdriverProcAddressQueryResult*);
  auto get_proc_address = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  if (!get_proc_address) {
    throw DriverError("the CUDA driver is too old (no cuGetProcAddress_v2); links needs CUDA 13");
  }
  CudaDriver driver;
  auto fetch = [&](const char* name, void** function) {
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    if (get_proc_address(name, function, kCudaVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status) !=
            CUDA_SUCCESS ||
        !*function) {
      throw DriverError(std::string("the CUDA driver has no ") + name +
                        " at the CUDA 13 ABI; links needs a CUDA 13 driver");
    }
  };
#define APPTRACER_LINKS_FETCH(name) fetch(#name, reinterpret_cast<void**>(&driver.name));
  APPTRACER_LINKS_DRIVER_FUNCTIONS(APPTRACER_LINKS_FETCH)
#undef APPTRACER_LINKS_FETCH
  CUresult init = driver.cuInit(0);
  if (init == CUDA_ERROR_NO_DEVICE) throw DriverError("the CUDA driver sees no GPU: nothing to measure");
  driver.check(init, "cuInit");
  int version = 0;
  driver.check(driver.cuDriverGetVersion(&version), "cuDriverGetVersion");
  if (version < kCudaVersion) {
    throw DriverError("the CUDA driver supports CUDA " + std::to_string(version / 1000) + "." +
                      std::to_string(version % 1000 / 10) + "; links needs CUDA 13");
  }
  return driver;
}

}  // namespace

void CudaDriver::check(CUresult result, const char* call) const {
  if (result == CUDA_SUCCESS) return;
  const char* text = nullptr;
  if (cuGetErrorString) cuGetErrorString(result, &text);
  throw DriverError(std::string(call) + ": " + (text ? text : "error " + std::to_string(result)));
}

const CudaDriver& load_cuda_driver() {
  static const CudaDriver driver = load();
  return driver;
}

}  // namespace apptracer::links
