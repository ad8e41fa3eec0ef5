// Framework ranges as records: what PyTorch is running on the calling thread
// (a module's forward, an aten op, an autograd node's backward), opened and
// closed by the Python bootstrap's module hooks and by torch's RecordFunction
// callbacks (torch_ops.h). The analyzer joins each launch to the ranges open
// on its thread when it was issued.
//
// Only ranges in which something else was recorded on their thread (a
// launch, a copy, an allocation, a range inside them that was kept) become
// records: about half of a training step's aten ops (views, shape queries,
// ops on CPU tensors) do no CUDA work, and attributing work is what ranges
// are for. The sink's every_range keeps all of them.
//
// The hot part: opening reads the clock and the thread's record count into
// a thread-local stack; closing compares the count and, for a range kept,
// appends one record (its name interned once per distinct text and thread).
// A range still open when the program ends is not recorded.
#pragma once

#include <cstdint>
#include <string_view>

#include "apptracer/records.h"

namespace apptracer::frameworks {

// The id of a range's name, for open_range; 0 when not recording.
uint32_t range_name(std::string_view name);

// Opens a range on the calling thread; name_id 0: named when it closes.
void open_range(FrameworkRangeKind kind, uint32_t name_id = 0);

// Closes the calling thread's innermost open range. It is recorded when
// something else was recorded on this thread while it was open, when `keep`
// (a forward op that made an autograd node: its backward's launches are
// attributed through it), or when the sink keeps every range. `name` gives
// the name's id, asked only then, where open_range had none. False when
// nothing was recorded.
using RangeName = uint32_t (*)(const void* context);
bool close_range(int64_t seq = -1, bool keep = false, RangeName name = nullptr,
                 const void* context = nullptr);

// Whether framework ranges are recorded at all (recording, with a string table).
bool ranges_recording();

}  // namespace apptracer::frameworks
