// NVTX ranges that mark steps of an iterative program, named either alike
// each time ("step") or with the step's number ("step 5", "iteration_12"):
// a name's family is the name without such a number, and the number, where
// there is one, says which step it is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace apptracer::trace {

struct StepName {
  std::string family;            // "step" for "step 5" and for "step"
  std::optional<int64_t> number;  // 5 for "step 5"; none for "step"
};

// Trailing decimal digits (at most 18), and the spaces, '_', '-', '#' or ':'
// before them, are the number; a name that is only a number, or has none,
// is its own family.
StepName step_name(std::string_view name);

}  // namespace apptracer::trace
