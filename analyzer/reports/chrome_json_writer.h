// Writes a timeline in the Chrome trace event JSON format, for tools that want
// JSON (chrome://tracing, Perfetto's JSON importer, scripts).
//
// JSON numbers are doubles, which cannot hold CUPTI timestamps to the
// nanosecond, so times are microseconds since the first event; the absolute
// first timestamp is in "otherData": {"origin_ns": ...}. Tracks that are not
// OS threads (GPU streams, NVTX) get thread ids from kSyntheticTidBase up,
// far above any Linux thread id.
#pragma once

#include <cstdint>
#include <ostream>

#include "timeline.h"

namespace apptracer {

inline constexpr int64_t kSyntheticTidBase = 1'000'000'000;

void write_chrome_json(std::ostream& out, const Timeline& timeline, Progress* progress = nullptr);

}  // namespace apptracer
