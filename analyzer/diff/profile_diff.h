// Two profiles of one program (before and after a change, or two ranks)
// side by side: for each entry its measures in A and B and the difference,
// what appeared or disappeared, sorted by impact.
#pragma once

#include <string>
#include <vector>

#include "analyzer/table/table.h"
#include "analyzer/diff/profile.h"

namespace apptracer::diff {

// Columns: category, name, change, then per measure M: M_a, M_b, M_diff
// (B minus A). change is "appeared" (only in B), "disappeared" (only in A),
// "changed", "same", or "path changed": the work of one route done another
// way (A's entry that disappeared and B's that appeared, as one row named
// "A's -> B's"). Rows go by the absolute difference of the `impacts` (measures
// of both profiles) in their order, largest first, then of the other
// measures in order. Throws std::invalid_argument when the profiles measure
// different things.
Table diff_profiles(const std::string& table_name, const Profile& a, const Profile& b,
                    const std::vector<std::string>& impacts);

}  // namespace apptracer::diff
