// The Compute Sanitizer API, loaded at run time (dlopen) like CUPTI: never a
// link-time dependency, and only in --exact mode. Each function is a member
// of one table, null until loaded.
#pragma once

#include <sanitizer.h>

#include <string>

namespace apptracer::exact {

#define APPTRACER_SANITIZER_FUNCTIONS(X) \
  X(sanitizerSubscribe)                  \
  X(sanitizerUnsubscribe)                \
  X(sanitizerEnableDomain)               \
  X(sanitizerEnableCallback)             \
  X(sanitizerGetResultString)            \
  X(sanitizerAddPatches)                 \
  X(sanitizerPatchInstructions)          \
  X(sanitizerPatchModule)                \
  X(sanitizerSetLaunchCallbackData)      \
  X(sanitizerAlloc)                      \
  X(sanitizerFree)                       \
  X(sanitizerMemcpyDeviceToHost)         \
  X(sanitizerMemcpyHostToDeviceAsync)    \
  X(sanitizerMemset)                     \
  X(sanitizerStreamSynchronize)

struct SanitizerApi {
#define APPTRACER_SANITIZER_MEMBER(name) decltype(&::name) name = nullptr;
  APPTRACER_SANITIZER_FUNCTIONS(APPTRACER_SANITIZER_MEMBER)
#undef APPTRACER_SANITIZER_MEMBER
  std::string path;  // the library loaded
};

// Loads libsanitizer-public.so from beside libapptracer.so, LD_LIBRARY_PATH,
// /usr/local/cuda/compute-sanitizer or $CUDA_HOME/compute-sanitizer. Null
// when it is not found (or lacks a function); `why_not` then says so.
const SanitizerApi* load_sanitizer(std::string& why_not);

// "SANITIZER_ERROR_...: text" for a result.
std::string describe(const SanitizerApi& api, SanitizerResult result);

}  // namespace apptracer::exact
