// One finding per rule and site: an iterative program repeats the same
// problem every step (a new host buffer, a new allocator block, an NVTX range
// "step 12"), and a user acts on the site once, not on each occurrence.
#pragma once

#include <string>
#include <vector>

#include "analyzer/diagnose/finding.h"

namespace apptracer::diagnose {

// `text` with every run of digits after `marker` (all of them when `marker`
// is empty) replaced by one '#'.
std::string without_numbers(const std::string& text, const std::string& marker);

// Where a finding happens, for grouping: its rule, names, NVTX range and call
// site, with what changes from step to step (allocation ids, numbers in
// NVTX range names) left out.
std::string site_of(const Finding& finding);

// Merges findings of one site into the costliest of them: occurrences, cost
// and saving (time and bytes) added up (unknown if any is), rows and names kept up to the limits.
std::vector<Finding> group_by_site(std::vector<Finding> findings, size_t max_rows);

}  // namespace apptracer::diagnose
