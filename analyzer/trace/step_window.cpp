#include "analyzer/trace/step_window.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "analyzer/trace/trace_file.h"

namespace apptracer::trace {

std::string StepSelection::describe() const {
  if (!numbers) return steady ? "steady steps" : "all steps";
  if (numbers->first == numbers->second) return "step " + std::to_string(numbers->first);
  return "steps " + std::to_string(numbers->first) + "-" + std::to_string(numbers->second);
}

bool StepSelection::chooses(const Step& step) const {
  if (numbers) return step.number >= numbers->first && step.number <= numbers->second;
  return step.steady;
}

namespace {

std::optional<int64_t> step_number(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

std::string no_steady_steps_to_price(const std::string& path, const std::string& option) {
  return path + ": " + option + " prices the steady steps, and this trace has none (stats --report steps says why); "
                                "leave it out";
}

std::pair<int64_t, int64_t> parse_step_numbers(std::string_view text) {
  size_t dash = text.find('-');
  std::optional<int64_t> first = step_number(text.substr(0, dash));
  std::optional<int64_t> last = dash == std::string_view::npos ? first : step_number(text.substr(dash + 1));
  if (!first || !last || *last < *first) {
    throw std::invalid_argument("--steps " + std::string(text) +
                                ": give the step numbers as A-B (A <= B) or N, e.g. --steps 100-200");
  }
  return {*first, *last};
}

StepWindow::StepWindow(const TraceSteps& steps, const StepSelection& selection, const std::string& path) {
  const ProcessSteps* with_steps = nullptr;
  size_t all_steps = 0, chosen_steps = 0;
  for (const ProcessSteps& process : steps.processes) {
    if (process.steps.empty()) continue;
    if (!with_steps) with_steps = &process;
    std::optional<std::pair<int64_t, int64_t>> span;
    all_steps += process.steps.size();
    for (const Step& step : process.steps) {
      if (!selection.chooses(step)) continue;
      ++chosen_steps;
      span = span ? std::make_pair(std::min(span->first, step.start_ns), std::max(span->second, step.end_ns))
                  : std::make_pair(step.start_ns, step.end_ns);
    }
    if (span) spans_[process.process] = *span;
  }
  if (!with_steps) {
    throw TraceError(path + ": " + selection.describe() + " asked for, but the trace has no steps (" +
                     ProcessSteps{}.how_found() + ")");
  }
  if (spans_.empty()) {
    throw TraceError(path + ": " + selection.describe() + " asked for, but the trace's steps are " +
                     std::to_string(with_steps->steps.front().number) + "-" +
                     std::to_string(with_steps->steps.back().number) + " (from " + with_steps->how_found() + ")");
  }
  description_ = selection.describe() + " (from " + with_steps->how_found() + ")";
  narrow_ = chosen_steps * 2 < all_steps;
}

bool StepWindow::holds(ProcessId process, int64_t ns) const {
  auto span = spans_.find(process);
  return span != spans_.end() && ns >= span->second.first && ns < span->second.second;
}

std::pair<int64_t, int64_t> StepWindow::all_processes() const {
  // Never empty: the constructor throws where no process has a chosen step.
  std::pair<int64_t, int64_t> all{INT64_MAX, INT64_MIN};
  for (const auto& [process, span] : spans_) {
    all.first = std::min(all.first, span.first);
    all.second = std::max(all.second, span.second);
  }
  return all;
}

std::string StepWindow::sql_filter(std::string_view event_time) const {
  auto [first, last] = all_processes();
  std::string time = "(" + std::string(event_time) + ")";
  return "WHERE " + time + " >= " + std::to_string(first) + " AND " + time + " < " + std::to_string(last);
}

bool StepWindow::overlaps(ProcessId process, int64_t start, int64_t end) const {
  auto span = spans_.find(process);
  return span != spans_.end() && start < span->second.second && end > span->second.first;
}

std::string StepWindow::sql_lifetime_filter(std::string_view start, std::string_view end) const {
  auto [first, last] = all_processes();
  std::string ended(end);
  return "WHERE " + std::string(start) + " < " + std::to_string(last) + " AND (" + ended + " IS NULL OR " +
         ended + " > " + std::to_string(first) + ")";
}

std::optional<std::pair<int64_t, int64_t>> StepWindow::span(ProcessId process) const {
  auto found = spans_.find(process);
  if (found == spans_.end()) return std::nullopt;
  return found->second;
}

}  // namespace apptracer::trace
