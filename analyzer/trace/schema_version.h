// A trace's schema version, as meta holds it.
#pragma once

#include <optional>
#include <string_view>

#include "apptracer/sqlite.h"

namespace apptracer {

// A schema version or a pid as meta holds it: up to 6 digits, surrounding
// white space ignored (a hand-edited "4\n"); none for anything else.
std::optional<int> parse_version(std::string_view text);

// meta's schema_version as a number; none when absent or not a number.
std::optional<int> trace_schema_version(Database& db);

}  // namespace apptracer
