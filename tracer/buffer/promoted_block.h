// A host block that became an allocation row because CUDA touched it, as
// the host stage hands it to the writer.
#pragma once

#include <cstdint>

#include "apptracer/records.h"

namespace apptracer {

struct PromotedBlock {
  Record allocation;     // the block's allocation record
  uint64_t free_ns = 0;  // when the program freed it (touched before, seen after); 0 while live
  // Where its pages were, read when it was freed (its memory is gone by the
  // time the writer sees it); -1 unknown. Live blocks are read by the writer.
  int numa_node = -1;
};

}  // namespace apptracer
