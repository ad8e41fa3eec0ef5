// How a profile names a trace's GPUs. Two ranks of one job each run on their
// own GPU (rank 0 on gpu0, rank 1 on gpu1): named by ordinal, every per-device
// row of one would seem gone and the other's new. When each trace uses
// exactly one GPU, both are named alike ("gpu") so their work compares.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "analyzer/trace/trace.h"

namespace apptracer::diff {

class DeviceLabels {
 public:
  // "gpu0", "gpu1", ...: each GPU by its ordinal.
  DeviceLabels() = default;
  // `device` named "gpu" and every other by its ordinal.
  static DeviceLabels naming_alone(int64_t device);

  // "gpuN" (or "gpu" for the device named alone), "host" for none.
  std::string operator()(const trace::NullableInt& device) const;

 private:
  std::optional<int64_t> alone_;
};

// The GPUs a trace's work ran on: kernels, copies (either end), memsets.
std::set<int64_t> devices_used(trace::Trace& trace);

// Both traces' labels: by ordinal, unless each used exactly one GPU and not
// the same one.
struct ComparedDevices {
  DeviceLabels a, b;
  // Says how devices were matched ("" when by ordinal).
  std::string note;
};
ComparedDevices compare_devices(const std::set<int64_t>& a, const std::set<int64_t>& b);

}  // namespace apptracer::diff
