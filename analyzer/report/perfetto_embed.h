// The trace's Perfetto timeline (what `apptracer timeline` writes), carried
// inside the report so one click opens it in ui.perfetto.dev or saves it;
// only up to a size, so a long run's report stays small enough to open.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "analyzer/trace/trace.h"

namespace apptracer::report {

inline constexpr size_t kEmbeddedTimelineLimit = size_t{8} << 20;  // bytes

// The timeline's bytes, or none when they would pass `limit`.
std::optional<std::string> perfetto_timeline(trace::Trace& trace, size_t limit);

// Standard base64 (RFC 4648, with padding): how the page carries bytes.
std::string base64(const std::string& bytes);

}  // namespace apptracer::report
