#include "analyzer/report/time_breakdown.h"

#include <algorithm>

namespace apptracer::report {

namespace {

using diagnose::TraceFacts;
using diagnose::Transfer;

int64_t gpu_time(const std::vector<Transfer>& transfers) {
  int64_t sum = 0;
  for (const Transfer& t : transfers) sum = saturating_add(sum, t.gpu_ns());
  return sum;
}

}  // namespace

WorkWindow work_window(const TraceFacts& facts, const std::vector<Migration>& moves) {
  int64_t first = INT64_MAX, last = INT64_MIN;
  auto add = [&](int64_t start, int64_t end) {
    first = std::min(first, start);
    last = std::max(last, end);
  };
  for (const diagnose::Kernel& k : facts.ops().kernels()) {
    if (k.timed()) add(*k.row->gpu_start_ns, *k.row->gpu_end_ns);
  }
  for (const auto* list : {&facts.ops().copies(), &facts.ops().memsets()}) {
    for (const Transfer& t : *list) {
      if (t.timed()) add(*t.gpu_start_ns(), *t.gpu_end_ns());
    }
  }
  for (const Migration& m : moves) add(m.start_ns, m.end_ns);
  if (first > last) return {facts.start_ns(), facts.end_ns()};
  return {first, last};
}

std::optional<WorkWindow> steady_window(trace::Trace& trace) {
  std::optional<WorkWindow> window;
  const trace::StepWindow* chosen = trace.window();
  for (const trace::ProcessSteps& process : trace.steps().processes) {
    std::optional<std::pair<int64_t, int64_t>> span = chosen ? chosen->span(process.process) : std::nullopt;
    std::optional<int64_t> start = chosen ? (span ? std::optional<int64_t>(span->first) : std::nullopt)
                                          : process.startup_end_ns();
    if (!start) continue;
    int64_t end = chosen ? span->second : process.steps.back().end_ns;
    if (!window) window = WorkWindow{*start, end};
    window->start_ns = std::min(window->start_ns, *start);
    window->end_ns = std::max(window->end_ns, end);
  }
  return window;
}

nlohmann::json where_time_went(const TraceFacts& facts, const std::vector<Migration>& moves) {
  int64_t kernel_ns = 0;
  for (const diagnose::Kernel& k : facts.ops().kernels()) kernel_ns = saturating_add(kernel_ns, k.gpu_ns());
  int64_t migration_ns = 0;
  for (const Migration& m : moves) migration_ns = saturating_add(migration_ns, elapsed_ns(m.start_ns, m.end_ns));
  int64_t sync_ns = 0;
  for (const diagnose::Sync& s : facts.ops().syncs()) sync_ns = saturating_add(sync_ns, elapsed_ns(s.start_ns(), s.end_ns()));
  int64_t allocation_ns = 0;
  for (const diagnose::Allocation& a : facts.ops().allocations()) {
    if (const diagnose::HostCall* call = facts.ops().call(a.alloc_correlation()))
      allocation_ns = saturating_add(allocation_ns, call->duration());
  }
  WorkWindow window = work_window(facts, moves);
  int64_t idle_ns = 0;
  for (const auto& device : facts.busy_by_device()) {
    idle_ns = saturating_add(idle_ns, saturating_sub(elapsed_ns(window.start_ns, window.end_ns),
                                                     diagnose::covered_ns(device.second, window.start_ns, window.end_ns)));
  }
  nlohmann::json rows = nlohmann::json::array();
  auto row = [&](const char* what, const char* side, int64_t ns) {
    if (ns > 0) rows.push_back({{"what", what}, {"side", side}, {"ns", ns}});
  };
  row("kernels", "GPU", kernel_ns);
  row("copies", "GPU", gpu_time(facts.ops().copies()));
  row("memsets", "GPU", gpu_time(facts.ops().memsets()));
  row("unified-memory migrations", "GPU", migration_ns);
  row("GPU idle between its first and last work", "GPU", idle_ns);
  row("waiting in synchronizations", "host", sync_ns);
  row("allocating memory", "host", allocation_ns);
  row("start-up before the first GPU work", "host", elapsed_ns(facts.start_ns(), window.start_ns));
  std::stable_sort(rows.begin(), rows.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["ns"].get<int64_t>() > b["ns"].get<int64_t>();
  });
  return rows;
}

}  // namespace apptracer::report
