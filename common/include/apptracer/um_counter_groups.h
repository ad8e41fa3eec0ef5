// The unified-memory counters a trace records, in groups a user chooses
// (`apptracer record --unified-memory`, APPTRACER_UNIFIED_MEMORY): read by
// record to check the option and by the tracer to configure CUPTI.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "apptracer/enums.h"

namespace apptracer {

// The counters a comma-separated list of groups asks for ("" is "default");
// nothing when it names a group that does not exist.
std::optional<std::vector<UmCounterKind>> um_counter_kinds(const std::string& spec);

// The names that list takes, for help and errors.
std::string um_counter_group_names();

}  // namespace apptracer
