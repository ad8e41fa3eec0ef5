// Framework ranges as records: what PyTorch is running on the calling thread
// (a module's forward, an aten op, an autograd node's backward), pushed and
// popped by the Python bootstrap's module hooks and by torch's RecordFunction
// callbacks (torch_ops.h). The analyzer joins each launch to the ranges open
// on its thread when it was issued.
//
// The hot part: it reads the clock and appends one record to the calling
// thread's buffer, as a CUPTI callback does. A name is interned once per
// distinct text and thread (the string table's lock, then a thread-local
// lookup).
#pragma once

#include <cstdint>
#include <string_view>

#include "apptracer/records.h"

namespace apptracer::frameworks {

// The id of a range's name, for push_range; 0 when not recording.
uint32_t range_name(std::string_view name);

// False when nothing was recorded (not recording).
bool push_range(FrameworkRangeKind kind, uint32_t name_id, int64_t seq = -1);
bool pop_range(FrameworkRangeKind kind);

// Whether framework ranges are recorded at all (recording, with a string table).
bool ranges_recording();

}  // namespace apptracer::frameworks
