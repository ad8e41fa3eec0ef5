#include "apptracer/output_path.h"

#include <unistd.h>

#include <climits>

namespace apptracer {

std::string absolute_output_path(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char directory[PATH_MAX];
  if (!getcwd(directory, sizeof directory)) return path;
  return std::string(directory) + (directory[1] ? "/" : "") + path;
}

}  // namespace apptracer
