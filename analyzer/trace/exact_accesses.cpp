#include "analyzer/trace/exact_accesses.h"

#include <algorithm>
#include <map>

#include "analyzer/trace/trace.h"
#include "apptracer/saturating.h"

namespace apptracer::trace {

ExactAccesses ExactAccesses::read(Trace& trace) {
  ExactAccesses out;
  std::unordered_map<int64_t, int64_t> kernel_of_launch;
  for (const Packed<ExactLaunchRow>& launch : trace.rows<ExactLaunchRow>()) {
    if (!launch.kernel_id) continue;
    kernel_of_launch.emplace(launch.id, *launch.kernel_id);
    KernelExact& kernel = out.kernels_[*launch.kernel_id];
    kernel.launch_id = launch.id;
    kernel.incomplete = launch.incomplete;
    kernel.approximate = launch.approximate != 0;
  }
  if (kernel_of_launch.empty()) return out;
  for (const Packed<ExactAccessRow>& row : trace.rows<ExactAccessRow>()) {
    auto kernel = kernel_of_launch.find(row.launch_id);
    if (kernel == kernel_of_launch.end()) continue;
    ExactAccess access;
    access.alloc_id = row.alloc_id;
    access.lo = row.lo;
    access.hi = row.hi;
    access.access = row.access;
    access.approximate = row.approximate != 0;
    out.kernels_[kernel->second].accesses.push_back(access);
  }
  for (auto& [kernel, exact] : out.kernels_) {
    std::stable_sort(exact.accesses.begin(), exact.accesses.end(),
                     [](const ExactAccess& a, const ExactAccess& b) { return a.lo < b.lo; });
  }
  return out;
}

const KernelExact* ExactAccesses::of(int64_t kernel_id) const {
  auto found = kernels_.find(kernel_id);
  return found == kernels_.end() ? nullptr : &found->second;
}

std::vector<AllocationTouch> touches_by_allocation(const KernelExact& kernel) {
  // Key: the allocation, or for unknown memory the start of its range.
  std::map<std::pair<bool, int64_t>, AllocationTouch> touches;
  for (const ExactAccess& a : kernel.accesses) {
    std::pair<bool, int64_t> key{a.alloc_id.has_value(), a.alloc_id.value_or(a.lo)};
    auto [it, added] = touches.try_emplace(key);
    AllocationTouch& t = it->second;
    if (added) {
      t.alloc_id = a.alloc_id;
      t.lo = a.lo;
      t.hi = a.hi;
    }
    t.lo = std::min(t.lo, a.lo);
    t.hi = std::max(t.hi, a.hi);
    bool reads = a.access == AccessKind::Read || a.access == AccessKind::ReadWrite;
    bool writes = a.access == AccessKind::Write || a.access == AccessKind::ReadWrite;
    t.reads |= reads;
    t.writes |= writes;
    t.approximate |= a.approximate;
    int64_t bytes = std::max<int64_t>(0, saturating_sub(a.hi, a.lo));
    if (!a.approximate && reads) t.read_bytes = saturating_add(t.read_bytes, bytes);
    if (!a.approximate && writes) t.written_bytes = saturating_add(t.written_bytes, bytes);
  }
  std::vector<AllocationTouch> out;
  out.reserve(touches.size());
  for (auto& [key, touch] : touches) out.push_back(touch);
  return out;
}

}  // namespace apptracer::trace
