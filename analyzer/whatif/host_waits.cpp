#include "analyzer/whatif/host_waits.h"

namespace apptracer::whatif {
namespace {

bool host_memory(MemoryKind kind) { return kind == MemoryKind::Pageable || kind == MemoryKind::Pinned; }

bool stepped(const trace::ProcessSteps* steps) { return steps && steps->has_steady_steps(); }

// Whether `ns` falls in a steady step (without steps: anywhere).
bool in_steady_steps(const trace::ProcessSteps* steps, int64_t ns) {
  return !stepped(steps) || steps->steady_step_at(ns).has_value();
}

std::string where(const trace::ProcessSteps* steps) {
  if (!stepped(steps)) return "the run (no steps found)";
  return "the " + std::to_string(steps->steps.size() - steps->first_steady()) + " steady steps (from " +
         steps->how_found() + ")";
}

}  // namespace

HostWaitPlan plan_no_host_waits(const ReplayInput& input, const trace::ProcessSteps* steps,
                                std::vector<bool>& blocking) {
  HostWaitPlan plan;
  auto in_steady_step = [&](int64_t ns) { return in_steady_steps(steps, ns); };
  plan.dropped_syncs.assign(input.syncs.size(), false);
  for (size_t s = 0; s < input.syncs.size(); ++s) {
    if (!in_steady_step(input.calls[input.syncs[s].call].start_ns)) continue;
    plan.dropped_syncs[s] = true;
    ++plan.syncs;
  }
  for (size_t i = 0; i < input.ops.size() && i < blocking.size(); ++i) {
    const ReplayOp& op = input.ops[i];
    // Back to the host only: a pageable upload blocks while the host stages
    // it, which no removed read-back changes (--pin does).
    if (!blocking[i] || !host_memory(op.dst_memory) || host_memory(op.src_memory)) continue;
    if (!in_steady_step(input.calls[op.call].start_ns)) continue;
    blocking[i] = false;
    ++plan.copies;
  }
  plan.where = where(steps);
  return plan;
}

std::string host_wait_note(const HostWaitPlan& plan) {
  return "--no-syncs: " + std::to_string(plan.syncs) + " synchronization(s) and " + std::to_string(plan.copies) +
         " blocking cop" + (plan.copies == 1 ? "y" : "ies") + " back to the host in " + plan.where +
         " no longer wait for the GPU (each call returns as the trace's asynchronous calls do; the copies "
         "and the host's own work are kept)";
}

HostWaitPlan plan_non_blocking_copies(const ReplayInput& input, const trace::ProcessSteps* steps,
                                      std::vector<bool>& dropped_syncs) {
  HostWaitPlan plan;
  plan.where = where(steps);
  dropped_syncs.resize(input.syncs.size(), false);
  std::vector<int32_t> next_on_thread(input.calls.size(), -1);
  for (size_t c = 0; c < input.calls.size(); ++c) {
    if (input.calls[c].previous >= 0) next_on_thread[input.calls[c].previous] = static_cast<int32_t>(c);
  }
  std::vector<int32_t> sync_of_call(input.calls.size(), -1);
  for (size_t s = 0; s < input.syncs.size(); ++s) {
    if (input.syncs[s].call >= 0) sync_of_call[input.syncs[s].call] = static_cast<int32_t>(s);
  }
  for (const ReplayOp& op : input.ops) {
    if (op.kind != OpKind::Copy || op.call < 0 || !host_memory(op.src_memory) || host_memory(op.dst_memory)) continue;
    int32_t next = next_on_thread[op.call];
    int32_t s = next >= 0 ? sync_of_call[next] : -1;
    if (s < 0 || dropped_syncs[s] || !in_steady_steps(steps, input.calls[next].start_ns)) continue;
    const SyncCall& sync = input.syncs[s];
    if (sync.kind != SyncKind::Stream || sync.stream != op.stream) continue;
    dropped_syncs[s] = true;
    ++plan.syncs;
  }
  return plan;
}

}  // namespace apptracer::whatif
