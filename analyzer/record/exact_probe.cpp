#include "analyzer/record/exact_probe.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "analyzer/trace/trace.h"
#include "apptracer/enums.h"
#include "apptracer/saturating.h"

namespace apptracer {

namespace {

using Range = std::tuple<int64_t, int64_t, int64_t, int64_t>;  // alloc, lo offset, hi offset, access

// A launch's ranges, each as offsets into its allocation.
std::vector<Range> ranges_of(trace::Trace& trace, int64_t launch) {
  std::vector<Range> out;
  for (const trace::Packed<ExactAccessRow>& access : trace.rows<ExactAccessRow>()) {
    if (access.launch_id != launch || !access.alloc_id) continue;
    const trace::Packed<AllocationRow>* allocation = trace.find<AllocationRow>(*access.alloc_id);
    if (!allocation) continue;
    out.emplace_back(allocation->id, saturating_sub(access.lo, allocation->address),
                     saturating_sub(access.hi, allocation->address),
                     static_cast<int64_t>(access.access));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string describe(const std::vector<Range>& ranges) {
  std::string text;
  for (const auto& [alloc, lo, hi, access] : ranges) {
    if (!text.empty()) text += ", ";
    text += "allocation " + std::to_string(alloc) + " [" + std::to_string(lo) + ", " +
            std::to_string(hi) + ") " + std::string(to_string(static_cast<AccessKind>(access)));
  }
  return text.empty() ? "nothing" : text;
}

ProbeVerdict two_runs(std::string reason) { return {ExactPath::TwoRuns, std::move(reason)}; }

}  // namespace

ProbeVerdict judge_probe_trace(Database& trace) {
  std::string exact = trace_meta(trace, "exact");
  const std::string unavailable = "unavailable: ";
  if (exact.compare(0, unavailable.size(), unavailable) == 0) {
    return {ExactPath::Unavailable, exact.substr(unavailable.size())};
  }
  if (exact != "on") return {ExactPath::Unavailable, "the probe's trace says nothing of --exact"};
  trace::Trace model(trace);
  const trace::Rows<KernelRow>& launched = model.rows<KernelRow>();
  auto kernels = static_cast<int64_t>(launched.size());
  auto timed = std::count_if(launched.begin(), launched.end(),
                             [](const auto& kernel) { return kernel.gpu_start_ns.has_value(); });
  if (kernels != 2 || timed != 2) {
    return two_runs("with the sanitizer subscribed, CUPTI recorded " + std::to_string(kernels) +
                    " of the probe's 2 kernels, " + std::to_string(timed) + " with GPU times");
  }
  const trace::Rows<ExactLaunchRow>& launches = model.rows<ExactLaunchRow>();
  if (launches.size() != 2) {
    return two_runs("with CUPTI subscribed, the sanitizer saw " + std::to_string(launches.size()) +
                    " of the probe's 2 launches");
  }
  if (std::any_of(launches.begin(), launches.end(),
                  [](const auto& launch) { return !launch.kernel_id; })) {
    return two_runs("the sanitizer's launches could not be joined to CUPTI's kernels by "
                    "correlation id");
  }
  if (std::any_of(launches.begin(), launches.end(), [](const auto& launch) {
        return launch.incomplete != ExactGap::None || launch.approximate != 0;
      })) {
    return two_runs("the probe's launches came back incomplete or approximate");
  }
  std::vector<int64_t> buffers;
  for (const trace::Packed<AllocationRow>& allocation : model.rows<AllocationRow>()) {
    if (allocation.kind == AllocKind::Device && allocation.bytes == kProbeBytes) {
      buffers.push_back(allocation.id);
    }
  }
  if (buffers.size() != 2) return two_runs("the probe's two buffers are not in its trace");
  int64_t a = buffers[0], b = buffers[1];
  auto rw = static_cast<int64_t>(AccessKind::ReadWrite);
  auto r = static_cast<int64_t>(AccessKind::Read);
  auto w = static_cast<int64_t>(AccessKind::Write);
  const std::vector<std::vector<Range>> expected = {
      {{a, 0, kProbeBytes, rw}},
      {{a, 0, kProbeBytes, r}, {b, 0, kProbeBytes, w}},
  };
  for (size_t launch = 0; launch < expected.size(); ++launch) {
    std::vector<Range> got = ranges_of(model, launches[launch].id);
    if (got != expected[launch]) {
      return two_runs("probe launch " + std::to_string(launch + 1) + " came back as " +
                      describe(got) + ", expected " + describe(expected[launch]));
    }
  }
  return {ExactPath::OneRun, "CUPTI and the Compute Sanitizer work together in one process"};
}

}  // namespace apptracer
