// Which framework a traced program ran on, from what it left in its trace,
// so that advice names that framework's fix (torch.compile rather than
// cudaStreamBeginCapture): PyTorch where its caching allocator reported
// blocks; JAX (XLA) where XLA named its work in NVTX ranges (XlaModule,
// XlaCompile..., its thunks); CuPy where its memory pool reported blocks;
// else a CUDA program of its own (C++).
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analyzer/trace/intervals.h"
#include "analyzer/trace/packed_rows.h"

namespace apptracer::trace {

class Trace;

enum class Framework : uint8_t { Cpp, Pytorch, Jax, Cupy };

Framework detect_framework(Trace& trace);
// Whether an NVTX range name is XLA's own ("XlaModule:...", "XlaCompile...",
// "Thunk:#hlo_op=...").
bool is_xla_range_name(std::string_view name);
// Whether it names a framework's compiler at work: XLA's compile
// ("XlaCompile:...", "XlaCompileBackend:...") and its passes ("XlaPass:..."),
// where it also tries candidate kernels on buffers of its own.
bool is_compiler_range_name(std::string_view name);
// When a framework's compiler ran, by process: its compile and pass ranges
// on any thread, merged. While XLA compiles, the compiling thread waits in
// its range and worker threads autotune outside any range of their own:
// what any thread issued then is the compiler's (trial launches, copies and
// scratch buffers), not the program's.
class CompilerTime {
 public:
  // Keeps the range where its name is a compiler's; finish() when all are added.
  void add(ProcessId process, std::string_view name, int64_t start_ns, int64_t end_ns);
  void finish();
  bool at(ProcessId process, int64_t ns) const;
  // How long the compiler ran within [from, to].
  int64_t covered(ProcessId process, int64_t from, int64_t to) const;
  // The sum of measure(start, end) over the stretches of [from, to] it ran in
  // (what a device did then: its busy time, its short waits).
  template <typename Measure>
  int64_t sum_within(ProcessId process, int64_t from, int64_t to, Measure&& measure) const {
    auto found = by_process_.find(process);
    if (found == by_process_.end()) return 0;
    // Merged, they end in order too: from the first that ends after `from`.
    const Intervals& ranges = found->second;
    auto range = std::upper_bound(ranges.begin(), ranges.end(), from,
                                  [](int64_t ns, const std::pair<int64_t, int64_t>& r) { return ns < r.second; });
    int64_t total = 0;
    for (; range != ranges.end() && range->first < to; ++range) {
      total += measure(std::max(range->first, from), std::min(range->second, to));
    }
    return total;
  }

 private:
  std::unordered_map<ProcessId, Intervals> by_process_;
};
// The threads that run a framework's backward pass: PyTorch's autograd
// engine works on a thread of its own per device, named "pt_autograd_N".
// A tensor made there that outlives the step is a gradient (or what a
// backward hook kept). (process, tid) of each.
std::set<std::pair<ProcessId, int64_t>> backward_threads(Trace& trace);
// "PyTorch", "JAX", "CuPy", "C++".
std::string_view to_string(Framework framework);

}  // namespace apptracer::trace
