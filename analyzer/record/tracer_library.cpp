#include "analyzer/record/tracer_library.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>

namespace apptracer {

std::string directory_of_executable() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return ".";
  path[n] = '\0';
  std::string full(path);
  return full.substr(0, full.rfind('/'));
}

std::string find_tracer_library() {
  if (const char* explicit_path = std::getenv("APPTRACER_LIBRARY")) return explicit_path;
  std::string bin = directory_of_executable();
  for (const char* relative : {"/../lib/libapptracer.so", "/../tracer/libapptracer.so"}) {
    std::string candidate = bin + relative;
    if (access(candidate.c_str(), R_OK) == 0) {
      char resolved[PATH_MAX];
      return realpath(candidate.c_str(), resolved) ? resolved : candidate;
    }
  }
  return "";
}

std::string preload_with(const std::string& library) {
  const char* existing = std::getenv("LD_PRELOAD");
  return existing && *existing ? library + ":" + existing : library;
}

}  // namespace apptracer
