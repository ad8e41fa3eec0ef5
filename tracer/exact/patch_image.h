// exact_patch.cu as a fatbin (sm_90 code and compute_90 PTX), compiled with
// `nvcc --compile-as-tools-patch` when apptracer is built and embedded here
// (the generated exact_patch_image.cpp), so nothing is looked up at run time.
#pragma once

#include <cstddef>

namespace apptracer::exact {

extern const unsigned char kPatchImage[];
extern const size_t kPatchImageSize;

}  // namespace apptracer::exact
