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
// thread, each around every launch and copy.
// Deterministic (fixed seed). Overwrites `path`.
#pragma once

#include <cstdint>
#include <string>

namespace apptracer::bench {

void write_synthetic_trace(const std::string& path, int64_t kernels, int64_t copies,
                           bool api_calls = false, bool sub_allocations = false,
                           int64_t nvtx_depth = 0);

}  // namespace apptracer::bench
