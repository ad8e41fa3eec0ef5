// kernels.ptx as text, compiled into the analyzer at build time
// (kernels_ptx.cpp.in) and given to the driver to JIT-compile.
#pragma once

namespace apptracer::links {

extern const char* const kLinksKernelsPtx;

}  // namespace apptracer::links
