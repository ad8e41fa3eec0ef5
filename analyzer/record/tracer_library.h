// Where the tracer library is, and how a child process gets it preloaded:
// `record` runs programs under it, `links` runs its launch loop under it.
#pragma once

#include <string>

namespace apptracer {

// The directory of the running apptracer.
std::string directory_of_executable();

// libapptracer.so: $APPTRACER_LIBRARY, else ../lib beside an installed
// apptracer, else ../tracer in a build tree; "" when none is there.
std::string find_tracer_library();

// LD_PRELOAD's value with `library` first, before what the environment has.
std::string preload_with(const std::string& library);

}  // namespace apptracer
