#include "exact/sanitizer_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace apptracer::exact {

namespace {

std::string directory_of_this_library() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&directory_of_this_library), &info) || !info.dli_fname) {
    return "";
  }
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

std::vector<std::string> candidates() {
  const std::string name = "libsanitizer-public.so";
  std::vector<std::string> paths = {
      directory_of_this_library() + name,  // shipped beside us
      name,                                // LD_LIBRARY_PATH, ld.so.cache
      "/usr/local/cuda/compute-sanitizer/" + name,
  };
  if (const char* home = std::getenv("CUDA_HOME")) {
    paths.push_back(std::string(home) + "/compute-sanitizer/" + name);
  }
  return paths;
}

}  // namespace

const SanitizerApi* load_sanitizer(std::string& why_not) {
  static SanitizerApi api;
  static std::string failure;
  static const bool loaded = [] {
    void* library = nullptr;
    for (const std::string& candidate : candidates()) {
      library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (library) {
        api.path = candidate;
        break;
      }
    }
    if (!library) {
      failure =
          "the Compute Sanitizer library (libsanitizer-public.so) was not found; add the CUDA "
          "toolkit's compute-sanitizer directory to LD_LIBRARY_PATH";
      return false;
    }
#define APPTRACER_SANITIZER_LOAD(name)                                          \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(library, #name));     \
  if (!api.name) {                                                              \
    failure = api.path + " lacks " #name "; use the sanitizer of a CUDA 13 toolkit"; \
    return false;                                                               \
  }
    APPTRACER_SANITIZER_FUNCTIONS(APPTRACER_SANITIZER_LOAD)
#undef APPTRACER_SANITIZER_LOAD
    return true;
  }();
  if (!loaded) why_not = failure;
  return loaded ? &api : nullptr;
}

std::string describe(const SanitizerApi& api, SanitizerResult result) {
  const char* text = nullptr;
  if (api.sanitizerGetResultString) api.sanitizerGetResultString(result, &text);
  return text ? text : "sanitizer error " + std::to_string(static_cast<int>(result));
}

}  // namespace apptracer::exact
