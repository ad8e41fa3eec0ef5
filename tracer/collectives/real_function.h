// The real function behind an interposed one, found at its first call and
// kept: in `library` (a soname the program already loaded; never loaded by
// us) by the profiling name (pnccl*, PMPI_*: always the library's own), else
// by the plain name, else the next definition after ours (RTLD_NEXT).
//
// PyTorch loads libnccl in a local scope, where RTLD_NEXT and RTLD_DEFAULT
// do not see it, but dlopen(RTLD_NOLOAD) of its soname does.
#pragma once

#include <dlfcn.h>

#include <atomic>

namespace apptracer {

void* find_real_function(const char* const* libraries, const char* profiling_name,
                         const char* name);

template <typename F>
class RealFunction {
 public:
  RealFunction(const char* const* libraries, const char* profiling_name, const char* name)
      : libraries_(libraries), profiling_name_(profiling_name), name_(name) {}

  // nullptr while no library defines it.
  F get() {
    F f = function_.load(std::memory_order_acquire);
    if (!f) {
      f = reinterpret_cast<F>(find_real_function(libraries_, profiling_name_, name_));
      function_.store(f, std::memory_order_release);
    }
    return f;
  }
  const char* name() const { return name_; }

 private:
  const char* const* libraries_;  // null-terminated list of sonames
  const char* profiling_name_;
  const char* name_;
  std::atomic<F> function_{nullptr};
};

}  // namespace apptracer
