// `stats --report exact`: how much of each kernel's traffic the sanitizer
// saw, and how often the signature heuristic was wrong where it saw
// everything, per kernel name.
//
// For every launch with exact ranges, each allocation its arguments point
// into (kernel_args) is one pointer, whose assumed access is the union of the
// words pointing there (a `const T*` is read, anything else assumed
// read-write). Its coverage (exact_coverage.h) is counted in
// pointers_exact / pointers_partial / pointers_none, the launch's in
// launches_exact. Verdicts come from exact pointers only (silence proves
// nothing elsewhere):
//   rw_only_read / rw_only_written  assumed read-write, only read / only written
//   const_written                   a read-only (const) pointer's memory was written
//   never_touched                   a launch whose every access is seen recorded
//                                   nothing in the allocation (its coverage: none)
// and `outside` counts the allocations (or unknown regions) a launch touched
// that none of its arguments points into, `outside_bytes` their bytes. A
// launch whose ranges are bounds (approximate) or may miss accesses
// (incomplete) is counted in its own columns too.
#include <algorithm>
#include <map>
#include <set>

#include "apptracer/saturating.h"
#include "analyzer/trace/trace.h"
#include "analyzer/trace/exact_accesses.h"
#include "analyzer/trace/exact_coverage.h"
#include "analyzer/trace/operations.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/trace/short_names.h"

namespace apptracer {

namespace {

struct KernelVerdicts {
  int64_t launches = 0;
  int64_t launches_exact = 0;
  int64_t pointers = 0;
  int64_t pointers_exact = 0;
  int64_t pointers_partial = 0;
  int64_t pointers_none = 0;
  int64_t assumed_rw = 0;
  int64_t rw_only_read = 0;
  int64_t rw_only_written = 0;
  int64_t const_written = 0;
  int64_t never_touched = 0;
  int64_t outside = 0;
  int64_t outside_bytes = 0;
  int64_t approximate = 0;
  int64_t incomplete = 0;

  int64_t wrong() const {
    return rw_only_read + rw_only_written + const_written + never_touched + outside;
  }
};

// A launch's pointed-to allocations and the access assumed for each.
std::map<int64_t, AccessKind> pointers_of(const trace::KernelArguments::Words& words) {
  std::map<int64_t, AccessKind> out;
  for (const trace::KernelWord& word : words) {
    if (!word.alloc_id) continue;
    AccessKind& assumed = out[*word.alloc_id];
    AccessKind access = word.access;
    assumed = static_cast<AccessKind>(static_cast<int>(assumed) |
                                      static_cast<int>(access == AccessKind::Unknown
                                                           ? AccessKind::ReadWrite
                                                           : access));
  }
  return out;
}

void judge(KernelVerdicts& v, const trace::KernelExact& exact, const trace::LaunchCoverage& coverage,
           const std::map<int64_t, AccessKind>& pointers) {
  ++v.launches;
  if (coverage.launch == ExactCoverage::Exact) ++v.launches_exact;
  if (exact.approximate) ++v.approximate;
  if (exact.incomplete != ExactGap::None) ++v.incomplete;
  std::map<int64_t, trace::AllocationTouch> touched;
  for (const trace::AllocationTouch& touch : trace::touches_by_allocation(exact)) {
    if (touch.alloc_id && pointers.count(*touch.alloc_id)) {
      touched[*touch.alloc_id] = touch;
    } else {
      ++v.outside;
      int64_t bytes = std::max<int64_t>(0, saturating_sub(touch.hi, touch.lo));
      v.outside_bytes = saturating_add(v.outside_bytes, bytes);
    }
  }
  for (const auto& [alloc_id, assumed] : pointers) {
    ++v.pointers;
    if (assumed == AccessKind::ReadWrite) ++v.assumed_rw;
    ExactCoverage covered = coverage.in(alloc_id);
    if (covered == ExactCoverage::Partial) ++v.pointers_partial;
    if (covered == ExactCoverage::None) {
      ++v.pointers_none;
      if (exact.incomplete == ExactGap::None) ++v.never_touched;
      continue;
    }
    if (covered != ExactCoverage::Exact) continue;
    ++v.pointers_exact;
    auto found = touched.find(alloc_id);
    bool reads = found != touched.end() && found->second.reads;
    bool writes = found != touched.end() && found->second.writes;
    if (assumed == AccessKind::ReadWrite) {
      if (!writes) ++v.rw_only_read;
      if (!reads) ++v.rw_only_written;
    } else if (assumed == AccessKind::Read && writes) {
      ++v.const_written;
    }
  }
}

}  // namespace

ReportOutput exact_report(trace::Trace& trace) {
  trace::ExactAccesses exact = trace::ExactAccesses::read(trace);
  if (exact.empty()) {
    return {{}, "no --exact data in this trace: record it with `apptracer record --exact`"};
  }
  const trace::KernelArguments& arguments = trace.kernel_arguments();
  std::map<int64_t, KernelVerdicts> by_name_id;
  for (const auto& [kernel_id, kernel] : exact.kernels()) {
    const trace::Kernel* launch = trace.operations().kernel(kernel_id);
    trace::KernelArguments::Words words = launch ? arguments.of(*launch->row) : trace::KernelArguments::Words{};
    judge(by_name_id[launch ? trace::kernel_name_id(*launch->row) : 0], kernel,
          trace::coverage_of(kernel, words), launch ? pointers_of(words) : std::map<int64_t, AccessKind>{});
  }
  std::vector<std::pair<std::string, KernelVerdicts>> rows;
  for (const auto& [name_id, verdicts] : by_name_id) {
    rows.emplace_back(trace.string(name_id, "?"), verdicts);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second.wrong() != b.second.wrong() ? a.second.wrong() > b.second.wrong()
                                                : a.second.launches > b.second.launches;
  });
  Table table{"exact",
              {"kernel", "launches", "launches_exact", "pointers", "pointers_exact",
               "pointers_partial", "pointers_none", "assumed_rw", "rw_only_read",
               "rw_only_written", "const_written", "never_touched", "outside", "outside_bytes",
               "approximate", "incomplete"},
              {}};
  set_text_form(table, "kernel", trace::short_kernel_name_cell);
  for (const auto& [name, v] : rows) {
    table.rows.push_back({name, v.launches, v.launches_exact, v.pointers, v.pointers_exact,
                          v.pointers_partial, v.pointers_none, v.assumed_rw, v.rw_only_read,
                          v.rw_only_written, v.const_written, v.never_touched, v.outside,
                          v.outside_bytes, v.approximate, v.incomplete});
  }
  return {{table}, {}};
}

}  // namespace apptracer
