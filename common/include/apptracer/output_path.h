// How a trace's output name is read, by `apptracer record` and the tracer
// alike.
#pragma once

#include <string>

namespace apptracer {

// `path` made absolute against the current directory (unchanged if it is
// absolute already, or if the current directory is gone). Done once, at the
// start of a run: a program that changes directory afterwards cannot move
// its trace, nor have the tracer write into another directory's file of the
// same name.
std::string absolute_output_path(const std::string& path);

}  // namespace apptracer
