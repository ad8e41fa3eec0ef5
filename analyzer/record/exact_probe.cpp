#include "analyzer/record/exact_probe.h"

#include <tuple>
#include <vector>

#include "apptracer/enums.h"
#include "analyzer/trace/trace_file.h"

namespace apptracer {

namespace {

using Range = std::tuple<int64_t, int64_t, int64_t, int64_t>;  // alloc, lo offset, hi offset, access

int64_t scalar(Database& db, const std::string& sql) {
  Statement rows = db.prepare(sql);
  return rows.step() && !rows.is_null(0) ? rows.int64(0) : 0;
}

std::vector<Range> ranges_of(Database& db, int64_t launch) {
  std::vector<Range> out;
  Statement rows = db.prepare(
      "SELECT a.alloc_id, a.lo - al.address, a.hi - al.address, a.access FROM exact_accesses a "
      "JOIN allocations al ON al.id = a.alloc_id WHERE a.launch_id = ? ORDER BY a.alloc_id, a.lo");
  rows.bind(1, launch);
  while (rows.step()) out.emplace_back(rows.int64(0), rows.int64(1), rows.int64(2), rows.int64(3));
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
  int64_t kernels = scalar(trace, "SELECT count(*) FROM kernels");
  int64_t timed = scalar(trace, "SELECT count(gpu_start_ns) FROM kernels");
  if (kernels != 2 || timed != 2) {
    return two_runs("with the sanitizer subscribed, CUPTI recorded " + std::to_string(kernels) +
                    " of the probe's 2 kernels, " + std::to_string(timed) + " with GPU times");
  }
  int64_t launches = scalar(trace, "SELECT count(*) FROM exact_launches");
  if (launches != 2) {
    return two_runs("with CUPTI subscribed, the sanitizer saw " + std::to_string(launches) +
                    " of the probe's 2 launches");
  }
  if (scalar(trace, "SELECT count(*) FROM exact_launches WHERE kernel_id IS NULL") != 0) {
    return two_runs("the sanitizer's launches could not be joined to CUPTI's kernels by "
                    "correlation id");
  }
  if (scalar(trace, "SELECT count(*) FROM exact_launches WHERE incomplete != 0 OR "
                    "approximate != 0") != 0) {
    return two_runs("the probe's launches came back incomplete or approximate");
  }
  std::vector<int64_t> buffers;
  Statement rows =
      trace.prepare("SELECT id FROM allocations WHERE kind = ? AND bytes = ? ORDER BY id");
  rows.bind(1, static_cast<int64_t>(AllocKind::Device)).bind(2, int64_t{kProbeBytes});
  while (rows.step()) buffers.push_back(rows.int64(0));
  if (buffers.size() != 2) return two_runs("the probe's two buffers are not in its trace");
  int64_t a = buffers[0], b = buffers[1];
  auto rw = static_cast<int64_t>(AccessKind::ReadWrite);
  auto r = static_cast<int64_t>(AccessKind::Read);
  auto w = static_cast<int64_t>(AccessKind::Write);
  const std::vector<std::vector<Range>> expected = {
      {{a, 0, kProbeBytes, rw}},
      {{a, 0, kProbeBytes, r}, {b, 0, kProbeBytes, w}},
  };
  Statement ids = trace.prepare("SELECT id FROM exact_launches ORDER BY id");
  for (size_t launch = 0; launch < expected.size() && ids.step(); ++launch) {
    std::vector<Range> got = ranges_of(trace, ids.int64(0));
    if (got != expected[launch]) {
      return two_runs("probe launch " + std::to_string(launch + 1) + " came back as " +
                      describe(got) + ", expected " + describe(expected[launch]));
    }
  }
  return {ExactPath::OneRun, "CUPTI and the Compute Sanitizer work together in one process"};
}

}  // namespace apptracer
