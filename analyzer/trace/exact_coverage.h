// How much of an --exact launch's memory traffic the Compute Sanitizer saw,
// per launch and per allocation its arguments point into (exact_coverage in
// tables.def). Silence proves nothing: a kernel that copies through TMA
// tensor maps moves data the sanitizer never reports, so a pointer with no
// access recorded is not "untouched", it is not covered.
//
//   none     no access recorded in the allocation, or the launch was not
//            instrumented or never read back
//   partial  accesses recorded, but the launch's code also copies through
//            tensor maps (exact_launches.incomplete): more may be missing
//   exact    accesses recorded by a launch whose every access is seen
//
// A launch is exact when its code is fully seen and every allocation its
// arguments point into is; none when nothing at all was recorded of a
// launch that has pointers or is not fully seen; partial otherwise. Memory
// no argument points into is covered as the launch's code allows (exact,
// or partial with tensor copies).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/trace/exact_accesses.h"
#include "analyzer/trace/kernel_arguments.h"

namespace apptracer::trace {

struct PointerCoverage {
  int64_t alloc_id = 0;
  ExactCoverage coverage = ExactCoverage::None;
};

struct LaunchCoverage {
  ExactCoverage launch = ExactCoverage::None;
  std::vector<PointerCoverage> pointers;  // by alloc_id, one per allocation pointed into
  ExactCoverage elsewhere = ExactCoverage::None;  // memory no argument points into

  // The coverage of what the launch did in `alloc_id` (none: memory in no
  // known allocation).
  ExactCoverage in(std::optional<int64_t> alloc_id) const;
};

LaunchCoverage coverage_of(const KernelExact& exact, const KernelArguments::Words& words);

}  // namespace apptracer::trace
