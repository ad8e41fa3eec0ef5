#include "analyzer/trace/exact_coverage.h"

#include <algorithm>

namespace apptracer::trace {

ExactCoverage LaunchCoverage::in(std::optional<int64_t> alloc_id) const {
  if (!alloc_id) return elsewhere;
  auto found = std::lower_bound(
      pointers.begin(), pointers.end(), *alloc_id,
      [](const PointerCoverage& p, int64_t wanted) { return p.alloc_id < wanted; });
  return found != pointers.end() && found->alloc_id == *alloc_id ? found->coverage : elsewhere;
}

LaunchCoverage coverage_of(const KernelExact& exact, const KernelArguments::Words& words) {
  LaunchCoverage out;
  bool seen_whole = exact.incomplete == ExactGap::None;
  bool recorded = exact.incomplete != ExactGap::NotInstrumented &&
                  exact.incomplete != ExactGap::NotReadBack;
  out.elsewhere = !recorded ? ExactCoverage::None
                  : seen_whole ? ExactCoverage::Exact
                               : ExactCoverage::Partial;
  for (const KernelWord& word : words) {
    if (word.alloc_id) out.pointers.push_back({*word.alloc_id, ExactCoverage::None});
  }
  std::sort(out.pointers.begin(), out.pointers.end(),
            [](const PointerCoverage& a, const PointerCoverage& b) { return a.alloc_id < b.alloc_id; });
  out.pointers.erase(std::unique(out.pointers.begin(), out.pointers.end(),
                                 [](const PointerCoverage& a, const PointerCoverage& b) {
                                   return a.alloc_id == b.alloc_id;
                                 }),
                     out.pointers.end());
  if (recorded) {
    for (const ExactAccess& access : exact.accesses) {
      if (!access.alloc_id) continue;
      auto found = std::lower_bound(
          out.pointers.begin(), out.pointers.end(), *access.alloc_id,
          [](const PointerCoverage& p, int64_t wanted) { return p.alloc_id < wanted; });
      if (found != out.pointers.end() && found->alloc_id == *access.alloc_id)
        found->coverage = out.elsewhere;
    }
  }
  bool all_exact = std::all_of(out.pointers.begin(), out.pointers.end(), [](const PointerCoverage& p) {
    return p.coverage == ExactCoverage::Exact;
  });
  bool nothing = !recorded || (exact.accesses.empty() && (!seen_whole || !out.pointers.empty()));
  out.launch = nothing                   ? ExactCoverage::None
               : seen_whole && all_exact ? ExactCoverage::Exact
                                         : ExactCoverage::Partial;
  return out;
}

}  // namespace apptracer::trace
