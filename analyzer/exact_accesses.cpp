#include "exact_accesses.h"

#include <algorithm>
#include <map>

#include "apptracer/saturating.h"

namespace apptracer {

ExactAccesses ExactAccesses::read(Database& db) {
  ExactAccesses out;
  if (!db.has_table("exact_launches") || !db.has_table("exact_accesses")) return out;
  Statement launches = db.prepare(
      "SELECT kernel_id, incomplete, approximate FROM exact_launches WHERE kernel_id IS NOT NULL");
  while (launches.step()) {
    KernelExact& kernel = out.kernels_[launches.int64(0)];
    kernel.incomplete = static_cast<ExactGap>(launches.int64(1));
    kernel.approximate = launches.int64(2) != 0;
  }
  Statement rows = db.prepare(
      "SELECT l.kernel_id, a.alloc_id, a.lo, a.hi, a.access, a.approximate FROM exact_accesses a "
      "JOIN exact_launches l ON l.id = a.launch_id WHERE l.kernel_id IS NOT NULL "
      "ORDER BY l.kernel_id, a.lo");
  while (rows.step()) {
    ExactAccess access;
    access.alloc_id = rows.optional_int64(1);
    access.lo = rows.int64(2);
    access.hi = rows.int64(3);
    access.access = static_cast<AccessKind>(rows.int64(4));
    access.approximate = rows.int64(5) != 0;
    out.kernels_[rows.int64(0)].accesses.push_back(access);
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

}  // namespace apptracer
