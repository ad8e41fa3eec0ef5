#include "analyzer/model/tracing_cost.h"

#include "analyzer/model/median.h"

#include <algorithm>
#include <stdexcept>

namespace apptracer::model {

TracingLevel tracing_level_of(const std::string& options) {
  return options.find("kernel_arguments=off") != std::string::npos ? TracingLevel::Timing : TracingLevel::Full;
}

const char* to_string(TracingLevel level) { return level == TracingLevel::Timing ? "timing" : "full"; }

double TracingCost::added_ns(TracingLevel level) const {
  double traced = level == TracingLevel::Timing ? timing_ns : full_ns;
  return std::max(0.0, traced - untraced_ns);
}

double TracingCost::cupti_added_ns(TracingLevel level) const {
  double callbacks = level == TracingLevel::Timing ? timing_callbacks_ns : full_callbacks_ns;
  return std::max(0.0, added_ns(level) - callbacks);
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
