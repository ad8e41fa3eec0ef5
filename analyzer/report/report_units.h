// The units the report's page data is written in.
#pragma once

#include <cstdint>

namespace apptracer::report {

// Milliseconds, as the page's charts and tables show times.
inline double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

}  // namespace apptracer::report
