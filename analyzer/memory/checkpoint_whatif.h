// What-if for memory: a module's activations recomputed instead of kept
// (activation checkpointing, torch.utils.checkpoint), from the framework
// context (which module's forward or backward issued each operation) and
// the lifetimes the memory model knows.
//
// A piece produced in the module's forward (or a submodule's) and last
// used in its backward is held only while the forward uses it, then made
// again when the module's backward begins (the forward rerun) and held to
// its recorded end. Everything else keeps its lifetime: the module's input
// (made before its forward) and its output (last used outside its
// backward) are kept as checkpointing keeps them. The cost: the module's
// forward work run again, the GPU time of the operations its forward
// issued.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/dvdg/graph.h"
#include "analyzer/memory/memory_model.h"

namespace apptracer::memory {

struct CheckpointWhatIf {
  const DeviceMemory* device = nullptr;
  // The most live at once (caches not counted: memory_whatif.h), as
  // recorded and with the module checkpointed, in the device's window.
  int64_t peak_live_bytes = 0;
  int64_t peak_if_checkpointed = 0;
  int64_t pieces = 0;  // pieces no longer held between forward and backward
  int64_t forward_gpu_ns = 0;  // the module's forward work, all of it in the window
  int64_t steps = 0;  // the process's steps in the window; 0: none (the cost is the run's)
  int64_t recompute_ns_per_step() const { return steps > 0 ? forward_gpu_ns / steps : forward_gpu_ns; }
};

// One answer per device whose memory the module's forward wrote; none when
// the trace has no forward of `module` (a module's dotted path as
// framework_ranges names it: "layer3", "encoder.layers.0"; its submodules
// count as it).
std::vector<CheckpointWhatIf> checkpoint_what_if(trace::Trace& trace, const dvdg::Graph& graph,
                                                 const MemoryModel& model, const std::string& module);

}  // namespace apptracer::memory
