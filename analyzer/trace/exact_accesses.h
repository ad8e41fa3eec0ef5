// What --exact recorded for each kernel (exact_launches, exact_accesses):
// the byte ranges it really read and wrote, per allocation. The DVDG uses
// them instead of what the kernel's arguments suggest (access_source
// sanitizer); `stats --report exact` compares the two.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "apptracer/enums.h"

namespace apptracer::trace {

class Trace;

struct ExactAccess {
  std::optional<int64_t> alloc_id;  // none: memory in no known allocation
  int64_t lo = 0;
  int64_t hi = 0;
  AccessKind access = AccessKind::Read;  // r, w or rw
  bool approximate = false;              // a bound, not every byte touched
};

struct KernelExact {
  int64_t launch_id = 0;              // its exact_launches row
  std::vector<ExactAccess> accesses;  // by address
  ExactGap incomplete = ExactGap::None;
  bool approximate = false;
};

// One allocation (or unknown region) a kernel touched, summed over its ranges.
struct AllocationTouch {
  std::optional<int64_t> alloc_id;
  int64_t lo = 0;  // lowest byte touched
  int64_t hi = 0;  // one past the highest
  int64_t read_bytes = 0;     // r and rw ranges, exact ones
  int64_t written_bytes = 0;  // w and rw ranges, exact ones
  bool reads = false;         // exact or bound
  bool writes = false;
  bool approximate = false;  // some of it is a bound
};

class ExactAccesses {
 public:
  // Every launch linked to a kernels row; empty for a trace without --exact.
  static ExactAccesses read(Trace& trace);

  // A kernel's exact accesses; null when it was not recorded with --exact.
  const KernelExact* of(int64_t kernel_id) const;
  const std::unordered_map<int64_t, KernelExact>& kernels() const { return kernels_; }
  bool empty() const { return kernels_.empty(); }

 private:
  std::unordered_map<int64_t, KernelExact> kernels_;
};

// A kernel's accesses grouped by allocation (unknown memory by range start).
std::vector<AllocationTouch> touches_by_allocation(const KernelExact& kernel);

}  // namespace apptracer::trace
