// Records of a kernel launch as the tracer's launch callback sends them, for
// tests of the writer: the launch (through the driver, its arguments read)
// and the record of its parameter words that follows it.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "apptracer/records.h"

namespace apptracer::testing {

inline Record launch_record(uint32_t correlation, uint32_t name_id, uint64_t ns) {
  Record r{};
  r.type = RecordType::Kernel;
  r.correlation_id = r.own_correlation_id = correlation;
  r.kernel.name_id = name_id;
  r.kernel.api_start_ns = ns;
  r.kernel.device = -1;
  r.kernel.args_captured = true;
  r.kernel.launch_kind = LaunchKind::Driver;
  return r;
}

inline Record args_record(uint32_t correlation, std::initializer_list<KernelArgWord> words) {
  Record r{};
  r.type = RecordType::KernelArgs;
  r.correlation_id = r.own_correlation_id = correlation;
  r.kernel_args.count = static_cast<uint8_t>(words.size());
  r.kernel_args.last = true;
  int i = 0;
  for (const KernelArgWord& w : words) r.kernel_args.words[i++] = w;
  return r;
}

}  // namespace apptracer::testing
