// `whatif --checkpoint MODULE`: each device's peak memory with MODULE's
// activations recomputed instead of kept (analyzer/memory/checkpoint_whatif.h),
// beside the recorded peak, and the time the recomputation costs a step.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analyzer/table/table.h"
#include "analyzer/trace/trace.h"

namespace apptracer::whatif {

struct CheckpointDevice {
  int64_t pid = 0;
  std::string device;  // "GPU 0"
  int64_t peak_live_bytes = 0;
  int64_t peak_if_checkpointed = 0;
  int64_t pieces = 0;
  int64_t recompute_ns_per_step = 0;
  int64_t steps = 0;  // 0: no steps, the cost is the run's
};

struct CheckpointAnswer {
  std::string module;
  std::vector<CheckpointDevice> devices;
};

// Throws TraceError (one line) where the trace has no framework context or
// no forward of `module`.
CheckpointAnswer checkpoint_answer(trace::Trace& trace, const std::string& module);

Table checkpoint_table(const CheckpointAnswer& answer);
void write_checkpoint_text(std::ostream& out, const CheckpointAnswer& answer, bool after_replay);
// The replay's JSON (whatif_json) with the answer as its "checkpoint"; the
// answer alone without a replay.
std::string checkpoint_json(const std::optional<std::string>& replay_json, const std::optional<CheckpointAnswer>& answer);

}  // namespace apptracer::whatif
