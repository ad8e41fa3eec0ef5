// NVTX ranges that mark steps of an iterative program, named either alike
// each time ("step") or with the step's number ("step 5", "iteration_12",
// PyTorch profiler's "ProfilerStep#5", a JAX step annotation's
// "train#step_num=5#"): a name's family is the name without such a number,
// and the number, where there is one, says which step it is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace apptracer::trace {

struct StepName {
  std::string family;            // "step" for "step 5" and for "step"
  std::optional<int64_t> number;  // 5 for "step 5"; none for "step"
  bool annotated = false;         // the number is a "#step_num=N#" annotation's
};

// Trailing decimal digits (at most 18), and the spaces, '_', '-', '#' or ':'
// before them, are the number; a name that is only a number, or has none,
// is its own family. A TraceMe-encoded "NAME#step_num=N...#" is family NAME,
// step N.
StepName step_name(std::string_view name);

// How surely one range of this family is one step of the program: 0 when
// it is not a step marker (epochs, forward passes, layers); higher is surer.
// Step markers: a step annotation, "ProfilerStep" (torch.profiler), "step",
// "train_step", "training_step", then "iteration", "iter", then
// "run_training_batch" (PyTorch Lightning's profiler actions), "train_batch",
// "batch"; compared without case.
int step_marker_rank(const StepName& name);

}  // namespace apptracer::trace
