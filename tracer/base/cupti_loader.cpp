// CUPTI, loaded at run time instead of linked. A preloaded library whose
// dependency is missing stops the program from starting at all; loading
// CUPTI ourselves turns that into one log line and an untraced, unchanged run
// (the failure rules of docs/architecture.md). Each CUPTI function the tracer calls is defined
// here, hidden, forwarding to the real one or failing with
// CUPTI_ERROR_NOT_INITIALIZED when CUPTI could not be found.
#include <cupti.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "base/cupti_loader.h"

#define APPTRACER_CUPTI_FUNCTIONS(X)                                                            \
  X(cuptiActivityConfigureUnifiedMemoryCounter,                                                 \
    (CUpti_ActivityUnifiedMemoryCounterConfig * config, uint32_t count), (config, count))       \
  X(cuptiActivityEnable, (CUpti_ActivityKind kind), (kind))                                     \
  X(cuptiActivityDisable, (CUpti_ActivityKind kind), (kind))                                    \
  X(cuptiActivityFlushAll, (uint32_t flag), (flag))                                             \
  X(cuptiActivityGetNextRecord, (uint8_t * buffer, size_t valid, CUpti_Activity * *record),    \
    (buffer, valid, record))                                                                    \
  X(cuptiActivityGetNumDroppedRecords, (CUcontext context, uint32_t stream, size_t * dropped), \
    (context, stream, dropped))                                                                 \
  X(cuptiActivitySetAttribute, (CUpti_ActivityAttribute attribute, size_t * size, void* value), \
    (attribute, size, value))                                                                   \
  X(cuptiActivityRegisterCallbacks,                                                             \
    (CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed),  \
    (requested, completed))                                                                     \
  X(cuptiEnableCallback,                                                                        \
    (uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,          \
     CUpti_CallbackId cbid),                                                                    \
    (enable, subscriber, domain, cbid))                                                         \
  X(cuptiGetDeviceId, (CUcontext context, uint32_t * device), (context, device))               \
  X(cuptiGetGraphId, (CUgraph graph, uint32_t * id), (graph, id))                               \
  X(cuptiGetGraphNodeId, (CUgraphNode node, uint64_t * id), (node, id))                         \
  X(cuptiGetResultString, (CUptiResult result, const char** text), (result, text))             \
  X(cuptiGetStreamIdEx, (CUcontext context, CUstream stream, uint8_t per_thread, uint32_t * id), \
    (context, stream, per_thread, id))                                                          \
  X(cuptiGetTimestamp, (uint64_t * timestamp), (timestamp))                                     \
  X(cuptiGetVersion, (uint32_t * version), (version))                                           \
  X(cuptiSubscribe_v2,                                                                          \
    (CUpti_SubscriberHandle * subscriber, CUpti_CallbackFunc callback, void* user,             \
     CUpti_SubscriberParams* params),                                                           \
    (subscriber, callback, user, params))                                                       \
  X(cuptiUnsubscribe, (CUpti_SubscriberHandle subscriber), (subscriber))

namespace {

struct CuptiFunctions {
#define APPTRACER_CUPTI_MEMBER(name, params, args) decltype(&::name) name = nullptr;
  APPTRACER_CUPTI_FUNCTIONS(APPTRACER_CUPTI_MEMBER)
#undef APPTRACER_CUPTI_MEMBER
};

std::string directory_of_this_library() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&directory_of_this_library), &info) || !info.dli_fname) {
    return "";
  }
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

void* open_cupti() {
  const char* name = "libcupti.so.13";
  std::string candidates[] = {
      directory_of_this_library() + name,               // shipped beside us
      name,                                             // LD_LIBRARY_PATH, our RUNPATH, ld.so.cache
      std::string("/usr/local/cuda/lib64/") + name,     // the toolkit's usual home
      std::string("/usr/local/cuda/extras/CUPTI/lib64/") + name,
  };
  for (const std::string& candidate : candidates) {
    if (void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_GLOBAL)) return library;
  }
  if (const char* home = std::getenv("CUDA_HOME")) {
    return dlopen((std::string(home) + "/lib64/" + name).c_str(), RTLD_NOW | RTLD_GLOBAL);
  }
  return nullptr;
}

const CuptiFunctions& cupti() {
  static const CuptiFunctions functions = [] {
    CuptiFunctions f;
    void* library = open_cupti();
    if (!library) return f;
#define APPTRACER_CUPTI_LOAD(name, params, args) \
  f.name = reinterpret_cast<decltype(f.name)>(dlsym(library, #name));
    APPTRACER_CUPTI_FUNCTIONS(APPTRACER_CUPTI_LOAD)
#undef APPTRACER_CUPTI_LOAD
    return f;
  }();
  return functions;
}

}  // namespace

namespace apptracer {

bool cupti_loaded() { return cupti().cuptiSubscribe_v2 != nullptr; }

}  // namespace apptracer

extern "C" {
#define APPTRACER_CUPTI_FORWARD(name, params, args)         \
  CUptiResult CUPTIAPI name params {                        \
    auto function = cupti().name;                           \
    return function ? function args : CUPTI_ERROR_NOT_INITIALIZED; \
  }
APPTRACER_CUPTI_FUNCTIONS(APPTRACER_CUPTI_FORWARD)
#undef APPTRACER_CUPTI_FORWARD
}
