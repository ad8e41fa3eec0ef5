#include "analyzer/trace/step_names.h"

namespace apptracer::trace {

StepName step_name(std::string_view name) {
  size_t digits = name.size();
  while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
  size_t family_end = digits;
  while (family_end > 0 && std::string_view(" _-#:").find(name[family_end - 1]) != std::string_view::npos) {
    --family_end;
  }
  if (digits == name.size() || family_end == 0 || name.size() - digits > 18) {
    return {std::string(name), std::nullopt};
  }
  return {std::string(name.substr(0, family_end)), std::stoll(std::string(name.substr(digits)))};
}

}  // namespace apptracer::trace
