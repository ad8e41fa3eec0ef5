#include "collectives/real_function.h"

namespace apptracer {

void* find_real_function(const char* const* libraries, const char* profiling_name,
                         const char* name) {
  for (const char* const* soname = libraries; *soname; ++soname) {
    void* library = dlopen(*soname, RTLD_LAZY | RTLD_NOLOAD);
    if (!library) continue;
    void* f = dlsym(library, profiling_name);
    if (!f) f = dlsym(library, name);
    // The program keeps it loaded; RTLD_NOLOAD only took a reference.
    dlclose(library);
    if (f) return f;
  }
  void* f = dlsym(RTLD_NEXT, profiling_name);
  return f ? f : dlsym(RTLD_NEXT, name);
}

}  // namespace apptracer
