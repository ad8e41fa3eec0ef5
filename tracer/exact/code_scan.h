// Which kernels of a module copy global memory in ways the CUDA 13.0
// sanitizer does not report to patches: TMA tensor copies (cp.async.bulk.tensor,
// SASS UTMALDG / UTMASTG / UTMAREDG) have no instruction id. Their launches
// are marked incomplete. Found by scanning the module's cubin (the image the
// sanitizer hands over at MODULE_LOADED) for those opcodes.
//
// Opcodes are Hopper's (sm_90): the low 9 bits of each 128-bit instruction,
// read off nvdisasm output. A cubin of another architecture, or one that is
// not an ELF image, cannot be scanned (`readable` false).
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include "apptracer/enums.h"

namespace apptracer::exact {

struct CodeScan {
  bool readable = false;
  std::set<std::string> functions;      // every function with code in the image
  std::set<std::string> tensor_copies;  // functions using TMA tensor copies
};

CodeScan scan_cubin(const void* image, size_t size);

// What the tracer knows of a loaded module's code.
struct ModuleCode {
  bool instrumented = false;  // every patch applied
  CodeScan scan;
};

// Why a launch of `function` (null: the module is unknown) may miss accesses;
// None when its ranges are complete. A name the scan does not know, in a
// module with tensor copies, may be one of them.
ExactGap gap_of(const ModuleCode* module, const std::string& function);

}  // namespace apptracer::exact
