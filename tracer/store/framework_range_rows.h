// A framework range record (recorded whole, when the range ended) as a
// framework_ranges row.
#pragma once

#include "apptracer/records.h"
#include "apptracer/row_inserter.h"

namespace apptracer {

FrameworkRangeRow framework_range_row(const Record& r);

}  // namespace apptracer
