// A synthetic trace database for the analyzer benchmarks: `kernels` kernel
// launches with 3 pointer arguments each (two const inputs, one output, over
// 2000 device buffers) and `copies` host<->device copies spread among them,
// on two streams ordered by events every 1000 kernels and a device
// synchronization every 100k. With `api_calls`, each launch and copy also has
// the runtime call that made it (its driver call folded in), as traced
// programs have. With `sub_allocations`, the device buffers are tensors a framework
// allocator carved out of 20 segments (sub_allocations rows), as PyTorch
// traces have them: each kernel writes a new tensor, put where the oldest
// of the 2000 live tensors was just freed, and reads two live ones. With
// `nvtx_depth`, that many NVTX push/pop ranges nested on the launching
// thread, each around every launch and copy. With `foreach_tensors` K, a
// training step's optimizer: every kStepKernels launches end a step with a
// foreach kernel (multi_tensor_apply_kernel) whose first parameter is an
// array of K pointers, one to each of K parameter tensors of their own, each
// assumed read and written (as PyTorch's arguments are recorded).
// Deterministic (fixed seed). Overwrites `path`.
#pragma once

#include <cstdint>
#include <string>

namespace apptracer::bench {

void write_synthetic_trace(const std::string& path, int64_t kernels, int64_t copies,
                           bool api_calls = false, bool sub_allocations = false,
                           int64_t nvtx_depth = 0, int64_t foreach_tensors = 0);

// Launches per training step of the foreach pattern: the 2,000-step
// GPT-2-style trace's (1,138,008 kernels).
inline constexpr int64_t kStepKernels = 569;

}  // namespace apptracer::bench
