// One clock for every record: CUPTI's, so API calls (host) and activity
// records (GPU) share a time line.
#pragma once

#include <cstdint>

namespace apptracer {

uint64_t now_ns();

}  // namespace apptracer
