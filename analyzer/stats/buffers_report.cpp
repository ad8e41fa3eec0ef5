// What nsys and the PyTorch profiler cannot say: for every allocation that
// GPU work touched, which work touched it. Kernels count launches with an
// argument pointing into the allocation (resolved by the tracer); copies count
// in both directions with their bytes; memsets count fills. Allocations no
// GPU work used are left out.
#include <set>
#include <unordered_map>

#include "apptracer/enums.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/stats/sums.h"

namespace apptracer {

namespace {

struct BufferUse {
  int64_t kernels = 0;
  int64_t copies_in = 0, bytes_in = 0;
  int64_t copies_out = 0, bytes_out = 0;
  int64_t memsets = 0;
};

}  // namespace

Table buffers_report(trace::Trace& trace) {
  std::unordered_map<int64_t, BufferUse> uses;
  const trace::KernelArguments& arguments = trace.kernel_arguments();
  for (const trace::Kernel& launch : trace.operations().kernels()) {
    const auto& kernel = *launch.row;
    std::set<int64_t> used;
    for (const trace::KernelWord& word : arguments.of(kernel)) {
      if (word.alloc_id) used.insert(*word.alloc_id);
    }
    for (int64_t alloc_id : used) ++uses[alloc_id].kernels;
  }
  for (const trace::Transfer& transfer : trace.operations().copies()) {
    const auto& copy = *transfer.copy_row();
    if (copy.dst_alloc_id) {
      BufferUse& use = uses[*copy.dst_alloc_id];
      ++use.copies_in;
      use.bytes_in = saturating_add(use.bytes_in, copy.bytes);
    }
    if (copy.src_alloc_id) {
      BufferUse& use = uses[*copy.src_alloc_id];
      ++use.copies_out;
      use.bytes_out = saturating_add(use.bytes_out, copy.bytes);
    }
  }
  for (const trace::Transfer& transfer : trace.operations().memsets()) {
    const auto& memset = *transfer.memset_row();
    if (memset.alloc_id) ++uses[*memset.alloc_id].memsets;
  }

  Table table{"buffers",
              {"allocation", "place", "kind", "bytes", "kernels", "copies_in", "bytes_in",
               "copies_out", "bytes_out", "memsets"},
              {}};
  for (const trace::Allocation& alloc : trace.operations().allocations()) {
    const auto& allocation = alloc.row();
    auto found = uses.find(allocation.id);
    if (found == uses.end()) continue;
    const BufferUse& use = found->second;
    table.rows.push_back({allocation.id,
                          allocation.device ? "device " + std::to_string(*allocation.device)
                                            : std::string("host"),
                          std::string(to_string(allocation.kind)), allocation.bytes, use.kernels,
                          use.copies_in, use.bytes_in, use.copies_out, use.bytes_out,
                          use.memsets});
  }
  return table;
}

}  // namespace apptracer
