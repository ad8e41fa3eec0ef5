#include "analyzer/model/tracing_cost.h"

#include "analyzer/model/median.h"

#include <algorithm>
#include <stdexcept>

namespace apptracer::model {

TracingLevel tracing_level_of(const std::string& options) {
  return options.find("kernel_arguments=off") != std::string::npos ? TracingLevel::Timing : TracingLevel::Full;
}

const char* to_string(TracingLevel level) { return level == TracingLevel::Timing ? "timing" : "full"; }

double TracingCost::added_ns(TracingLevel level) const { return call_added_ns(level) + work_added_ns(level); }

double TracingCost::call_added_ns(TracingLevel level) const {
  double traced = level == TracingLevel::Timing ? timing_ns : full_ns;
  return std::max(0.0, traced - untraced_ns);
}

double TracingCost::work_added_ns(TracingLevel level) const {
  double traced = level == TracingLevel::Timing ? timing_work_ns : full_work_ns;
  return std::max(0.0, traced - untraced_work_ns);
}

double TracingCost::beyond_callbacks_ns(TracingLevel level) const {
  double callbacks = level == TracingLevel::Timing ? timing_callbacks_ns : full_callbacks_ns;
  return std::max(0.0, added_ns(level) - callbacks);
}

std::string TracingCost::beyond_callbacks_what() const {
  return work_bytes > 0 ? "CUPTI's dispatch (with the program's work between launches it slows)" : "CUPTI's dispatch";
}

void TracingCost::fit_work(double bytes, std::vector<double> untraced, std::vector<double> full,
                           std::vector<double> timing) {
  if (untraced.size() != untraced_samples.size() || full.size() != full_samples.size() ||
      timing.size() != timing_samples.size() || untraced.empty()) {
    throw std::invalid_argument("the work between launches was not measured in every round");
  }
  work_bytes = bytes;
  untraced_work_ns = median(untraced);
  full_work_ns = median(full);
  timing_work_ns = median(timing);
  untraced_work_samples = std::move(untraced);
  full_work_samples = std::move(full);
  timing_work_samples = std::move(timing);
}

void TracingCost::fit_callbacks(std::vector<double> full, std::vector<double> timing) {
  full_callbacks_ns = full.empty() ? 0 : median(full);
  timing_callbacks_ns = timing.empty() ? 0 : median(timing);
  full_callbacks_samples = std::move(full);
  timing_callbacks_samples = std::move(timing);
}

TracingCost fit_tracing_cost(int gpu, std::vector<double> untraced, std::vector<double> full,
                             std::vector<double> timing) {
  if (untraced.empty() || full.empty() || timing.empty()) {
    throw std::invalid_argument("tracing cost measurements hold no round");
  }
  TracingCost cost;
  cost.gpu = gpu;
  cost.untraced_ns = median(untraced);
  cost.full_ns = median(full);
  cost.timing_ns = median(timing);
  cost.untraced_samples = std::move(untraced);
  cost.full_samples = std::move(full);
  cost.timing_samples = std::move(timing);
  return cost;
}

}  // namespace apptracer::model
