// Writes a timeline in Perfetto's protobuf trace format (proto/perfetto_trace.proto),
// which ui.perfetto.dev opens directly.
#pragma once

#include <ostream>

#include "timeline.h"

namespace apptracer {

// Slices on one track must nest; GPU records that overlap on one stream
// (clock skew) are clipped to the enclosing slice so the file stays valid.
void write_perfetto_trace(std::ostream& out, const Timeline& timeline, Progress* progress = nullptr);

}  // namespace apptracer
