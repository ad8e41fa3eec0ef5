// A program's steps, the unit users think in: per process, from the NVTX
// ranges it marks them with (step_names.h: "step 5", "ProfilerStep#5",
// "step" numbered by order, ...), else found from the repeating sequence of
// its launches (launch_cycle.h). Step k lasts from its start to the next
// step's (the last: to its range's end, or to the end of the last work it
// issued), so the host's time between steps belongs to the step before.
// Start-up is everything before the first steady step: marked steps before
// the first whose launches are those of most steps are warm-up, part of it,
// as are the first steps in which a compiler ran (XLA's first calls).
// An operation belongs to the step it was issued in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/trace/operations.h"
#include "analyzer/trace/packed_rows.h"

namespace apptracer::trace {

class Trace;

enum class StepSource : uint8_t {
  None,          // no marker and no repetition: no steps
  NvtxNumbered,  // NVTX ranges carrying their step's number
  NvtxOrdered,   // NVTX ranges named alike, numbered 1, 2, ... in order
  LaunchCycle,   // the launch sequence's period, numbered 1, 2, ...
};

struct Step {
  int64_t number = 0;
  int64_t start_ns = 0;  // on the trace's clock
  int64_t end_ns = 0;
  bool steady = true;  // false: warm-up, part of start-up
};

struct ProcessSteps {
  ProcessId process = kSingleProcess;
  StepSource source = StepSource::None;
  std::string marker;  // the NVTX ranges' family ("step", "ProfilerStep"), for NVTX steps
  size_t period = 0;   // launch cycle: launches in one steady step
  int64_t start_ns = 0;  // when the process's first operation or call began: start-up's start
  std::vector<Step> steps;

  // The first steady step's index; steps.size() when there is none.
  size_t first_steady() const;
  // When start-up ended: the first steady step's start; none without steps.
  std::optional<int64_t> startup_end_ns() const;
  // The index of the step whose time holds `ns`; none before the first step
  // or after the last.
  std::optional<size_t> step_at(int64_t ns) const;
  // The same, where that step is steady (not warm-up).
  std::optional<size_t> steady_step_at(int64_t ns) const;
  // Whether any step is steady.
  bool has_steady_steps() const { return first_steady() < steps.size(); }
  // "NVTX ranges \"step\"", "a repeating launch sequence (569 launches a step)", ...
  std::string how_found() const;
};

struct TraceSteps {
  std::vector<ProcessSteps> processes;

  const ProcessSteps* find(ProcessId process) const;
  // The number of the step an operation was issued in; none before the
  // first step and where the program has no steps.
  std::optional<int64_t> step_of(const Operation& op) const;
};

// The steps of every process of the trace, from its whole trace.
TraceSteps find_steps(Trace& trace);

}  // namespace apptracer::trace
