// A retired launch -> records for the writer: one ExactLaunch record, then
// its ranges in ExactIntervals records, all from the retiring thread.
#pragma once

#include <cstdint>

#include "buffer/record_buffers.h"
#include "exact/slot_decoder.h"

namespace apptracer::exact {

// What the host knew about a launch when it began.
struct LaunchFacts {
  uint64_t launch_index = 0;  // from 1, in launch order
  uint64_t api_start_ns = 0;
  uint32_t correlation_id = 0;  // the API call that launched it; 0 when none was traced
  uint32_t name_id = 0;
  int32_t device = -1;
  int32_t graph_position = -1;  // node launches of a graph launch: from 0
  ExactGap incomplete = ExactGap::None;
};

void emit_exact_launch(RecordBuffers& buffers, const LaunchFacts& launch,
                       const DecodedLaunch& decoded);

}  // namespace apptracer::exact
