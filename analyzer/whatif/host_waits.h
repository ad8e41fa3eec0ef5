// --no-syncs: the steady steps' host waits for the GPU taken out, as taking a
// per-step loss.item(), .cpu() or torch.cuda.synchronize() out of a training
// loop does: their synchronizations no longer wait for the work they
// awaited, and their blocking copies back to the host no longer block (each
// call then returns as the trace's asynchronous calls do, scenario.h). The
// copies themselves, and what the host did with the values, are kept.
// Without steps, the whole run's waits go.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/trace/steps.h"
#include "analyzer/whatif/replay_input.h"

namespace apptracer::whatif {

struct HostWaitPlan {
  std::vector<bool> dropped_syncs;  // per ReplayInput::syncs
  int64_t syncs = 0;                // synchronizations that no longer wait
  int64_t copies = 0;               // blocking copies to the host that no longer block
  std::string where;                // "the 49 steady steps (from NVTX ranges \"step\")", "the run"
};

// Takes out the waits issued in the steady steps (`steps` may be null);
// `blocking` (per op, scenario.h's blocking_copies) loses those copies.
HostWaitPlan plan_no_host_waits(const ReplayInput& input, const trace::ProcessSteps* steps,
                                std::vector<bool>& blocking);

// The what-if's note: what was taken out, where.
std::string host_wait_note(const HostWaitPlan& plan);

// --non-blocking: copies from host memory to a GPU no longer waited for, as
// PyTorch's tensor.to(device, non_blocking=True) (and copy_) from pinned
// memory: its blocking form ends each such copy with a synchronization of
// the copy's stream, the next call on the copy's thread, which goes; in the
// steady steps, as --no-syncs (without steps, the run). Marks those in
// `dropped_syncs` (per ReplayInput::syncs, sized here if empty).
HostWaitPlan plan_non_blocking_copies(const ReplayInput& input, const trace::ProcessSteps* steps,
                                      std::vector<bool>& dropped_syncs);

}  // namespace apptracer::whatif
