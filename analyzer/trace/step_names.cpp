#include "analyzer/trace/step_names.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace apptracer::trace {

namespace {

constexpr std::string_view kStepAnnotation = "#step_num=";
constexpr size_t kMaxDigits = 18;

// "NAME#step_num=N#" (other "key=value" pairs may follow N after a ','):
// TraceMe's encoding of a step annotation.
std::optional<StepName> annotated_step(std::string_view name) {
  size_t key = name.find(kStepAnnotation);
  if (key == std::string_view::npos || key == 0) return std::nullopt;
  size_t first = key + kStepAnnotation.size();
  size_t end = first;
  while (end < name.size() && end - first <= kMaxDigits && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  if (end == first || end - first > kMaxDigits) return std::nullopt;
  return StepName{std::string(name.substr(0, key)), std::stoll(std::string(name.substr(first, end - first))), true};
}

}  // namespace

StepName step_name(std::string_view name) {
  if (std::optional<StepName> annotated = annotated_step(name)) return *annotated;
  size_t digits = name.size();
  while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
  size_t family_end = digits;
  while (family_end > 0 && std::string_view(" _-#:").find(name[family_end - 1]) != std::string_view::npos) {
    --family_end;
  }
  if (digits == name.size() || family_end == 0 || name.size() - digits > kMaxDigits) {
    return {std::string(name), std::nullopt};
  }
  return {std::string(name.substr(0, family_end)), std::stoll(std::string(name.substr(digits)))};
}

int step_marker_rank(const StepName& name) {
  if (name.annotated) return 4;
  std::string family = name.family;
  std::transform(family.begin(), family.end(), family.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  struct Marker {
    std::string_view family;
    int rank;
  };
  static constexpr std::array<Marker, 11> kMarkers = {{
      {"profilerstep", 4}, {"step", 3}, {"train_step", 3}, {"training_step", 3}, {"train step", 3},
      {"iteration", 2}, {"iter", 2}, {"run_training_batch", 1}, {"train_batch", 1},
      {"training_batch", 1}, {"batch", 1},
  }};
  for (const Marker& marker : kMarkers) {
    if (family == marker.family) return marker.rank;
  }
  return 0;
}

}  // namespace apptracer::trace
