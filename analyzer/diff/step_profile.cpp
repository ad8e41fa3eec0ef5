#include "analyzer/diff/step_profile.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "analyzer/trace/operations.h"
#include "analyzer/trace/step_names.h"
#include "apptracer/saturating.h"

namespace apptracer::diff {

namespace {

enum StepMeasure { kTime, kKernel, kCopy };

struct RangeUse {
  int64_t numbered = 0;  // occurrences whose name carried a step number ("step 5")
  int64_t count = 0;
  int64_t depth = INT64_MAX;  // the least nested occurrence's
  int64_t total_ns = 0;
};

std::map<std::string, RangeUse> range_uses(trace::Trace& trace) {
  std::map<std::string, RangeUse> uses;
  for (const auto& range : trace.rows<NvtxRangeRow>()) {
    if (!range.end_ns) continue;  // a mark, or a range never closed
    trace::StepName name = trace::step_name(trace.string(range.name_id, "?"));
    RangeUse& use = uses[name.family];
    use.numbered += name.number ? 1 : 0;
    ++use.count;
    use.depth = std::min(use.depth, range.depth.value_or(0));
    use.total_ns = saturating_add(use.total_ns, elapsed_ns(range.start_ns, *range.end_ns));
  }
  return uses;
}

struct Window {
  int64_t start_ns;
  int64_t end_ns;
};

struct Steps {
  trace::ProcessId process = trace::kSingleProcess;
  std::vector<Window> windows;  // in start order
};

// The occurrences of the range family `name` in the first process that has it.
Steps steps_of(trace::Trace& trace, const std::string& name) {
  Steps steps;
  bool found = false;
  for (const auto& range : trace.rows<NvtxRangeRow>()) {
    if (!range.end_ns || trace::step_name(trace.string(range.name_id, "?")).family != name) continue;
    if (!found) steps.process = range.process;
    found = true;
    if (range.process == steps.process) steps.windows.push_back({range.start_ns, *range.end_ns});
  }
  std::sort(steps.windows.begin(), steps.windows.end(),
            [](const Window& x, const Window& y) { return x.start_ns < y.start_ns; });
  return steps;
}

// The window the operation was issued in: the latest to start at or before
// it, if it had not ended.
const Window* window_of(const std::vector<Window>& windows, int64_t issue_ns) {
  auto after = std::upper_bound(windows.begin(), windows.end(), issue_ns,
                                [](int64_t ns, const Window& window) { return ns < window.start_ns; });
  if (after == windows.begin()) return nullptr;
  const Window& window = *(after - 1);
  return issue_ns <= window.end_ns ? &window : nullptr;
}

std::string occurrence_name(const std::string& name, size_t index) {
  char number[24];
  std::snprintf(number, sizeof number, "%06zu", index + 1);
  return name + " " + number;
}

}  // namespace

std::optional<std::string> step_range(trace::Trace& a, trace::Trace& b) {
  std::map<std::string, RangeUse> in_a = range_uses(a), in_b = range_uses(b);
  std::optional<std::string> chosen;
  std::tuple<bool, int64_t, int64_t, int64_t> best{};
  for (const auto& [name, use] : in_a) {
    auto other = in_b.find(name);
    if (use.count < 2 || other == in_b.end() || other->second.count < 2) continue;
    std::tuple<bool, int64_t, int64_t, int64_t> rank{use.numbered > 0, -use.depth, use.count,
                                                     use.total_ns};
    if (!chosen || rank > best) {
      chosen = name;
      best = rank;
    }
  }
  return chosen;
}

Profile step_profile(trace::Trace& trace, const std::string& name) {
  Steps steps = steps_of(trace, name);
  const std::vector<Window>& windows = steps.windows;
  Profile profile;
  profile.measures = {"time_ns", "kernel_ns", "copy_ns"};
  std::vector<std::vector<int64_t>*> entries;
  for (size_t i = 0; i < windows.size(); ++i) {
    entries.push_back(&profile.entry({"step", occurrence_name(name, i), ""}));
    (*entries.back())[kTime] = elapsed_ns(windows[i].start_ns, windows[i].end_ns);
  }
  auto attribute = [&](const trace::Operation& op, StepMeasure measure) {
    if (op.process != steps.process) return;
    if (const Window* window = window_of(windows, op.issue_ns)) {
      int64_t& sum = (*entries[static_cast<size_t>(window - windows.data())])[measure];
      sum = saturating_add(sum, elapsed_ns(op.start_ns, op.end_ns));
    }
  };
  const trace::TraceOperations& ops = trace.operations();
  for (const trace::Kernel& kernel : ops.kernels()) attribute(kernel.operation(), kKernel);
  for (const trace::Transfer& copy : ops.copies()) attribute(copy.operation(), kCopy);
  return profile;
}

}  // namespace apptracer::diff
