#include "analyzer/diff/device_labels.h"

namespace apptracer::diff {

DeviceLabels DeviceLabels::naming_alone(int64_t device) {
  DeviceLabels labels;
  labels.alone_ = device;
  return labels;
}

std::string DeviceLabels::operator()(const trace::NullableInt& device) const {
  if (!device) return "host";
  if (alone_ && *device == *alone_) return "gpu";
  return "gpu" + std::to_string(*device);
}

std::set<int64_t> devices_used(trace::Trace& trace) {
  std::set<int64_t> devices;
  auto add = [&](const trace::NullableInt& device) {
    if (device) devices.insert(*device);
  };
  const trace::TraceOperations& ops = trace.operations();
  for (const trace::Kernel& kernel : ops.kernels()) add(kernel.row->device);
  for (const trace::Transfer& copy : ops.copies()) {
    add(copy.source().device);
    add(copy.destination().device);
  }
  for (const trace::Transfer& memset : ops.memsets()) add(memset.device());
  return devices;
}

ComparedDevices compare_devices(const std::set<int64_t>& a, const std::set<int64_t>& b) {
  if (a.size() != 1 || b.size() != 1 || a == b) return {};
  int64_t in_a = *a.begin(), in_b = *b.begin();
  return {DeviceLabels::naming_alone(in_a), DeviceLabels::naming_alone(in_b),
          "devices: A ran on gpu" + std::to_string(in_a) + " only and B on gpu" + std::to_string(in_b) +
              " only: both are named \"gpu\" so their work compares"};
}

}  // namespace apptracer::diff
