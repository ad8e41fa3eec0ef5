// What the diagnoses read from a trace: its operations (copies, memsets,
// kernels, synchronizations, allocations, the host calls that issued them,
// NVTX ranges, devices, steps), the trace model's own (trace_operations.h),
// and what only the diagnoses derive from them: unified-memory events, the
// DVDG built by analyzer/dvdg, where the memory went, stragglers. Rules look
// things up here instead of each reading the trace.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analyzer/ranks/stragglers.h"
#include "analyzer/trace/exact_accesses.h"
#include "analyzer/trace/framework.h"
#include "analyzer/trace/framework_context.h"
#include "analyzer/trace/time_origin.h"
#include "analyzer/trace/trace.h"
#include "apptracer/enums.h"
#include "apptracer/saturating.h"
#include "analyzer/dvdg/graph.h"
#include "analyzer/progress.h"
#include "analyzer/trace/unified_memory.h"
#include "analyzer/memory/memory_model.h"
#include "analyzer/memory/memory_owners.h"
#include "analyzer/memory/producers.h"
#include "analyzer/model/tracing_cost.h"

namespace apptracer::diagnose {

using trace::NullableInt;

// The operations the rules read are the trace model's (trace_operations.h).
using trace::Allocation;
using trace::Device;
using trace::HostCall;
using trace::Kernel;
using trace::NvtxRange;
using trace::StartUp;
using trace::StepSpan;
using trace::Sync;
using trace::Transfer;

using trace::covered_ns;
using trace::Intervals;
using trace::merge_intervals;

struct TraceFacts {
  // The trace's operations, its steps and its span: the model's, which the
  // trace holds (it outlives the facts).
  const trace::TraceOperations* operations = nullptr;
  // NCCL and MPI calls per thread, and where framework allocators' blocks
  // lay (analyzer/memory/memory_owners.h).
  memory::CommunicationCalls communication_calls;
  memory::CompilerRanges compiler_ranges;
  memory::FrameworkSegments framework_segments;
  // Per allocation (as ops().allocations()): it holds a block a framework's
  // allocator handed out (a PyTorch caching allocator segment).
  std::vector<bool> holds_framework_blocks;
  trace::UmTrace um;
  // The program used managed memory, and its migrations were not asked for
  // (meta um_counters): the unified-memory rules have nothing to read.
  bool um_migrations_not_recorded = false;
  // The DVDG. Limited to steps, the facts keep the whole run's graph (one
  // graph per diagnosis: a training trace's is its costliest part): its ops
  // outside the window have no rows in ops(), and rules that look an op's
  // row up skip those. The memory model likewise (read_window_facts).
  dvdg::Graph graph;
  // What each launch's parameter words point into (the trace's, which
  // outlives the facts), and what --exact saw each kernel touch: what the
  // graph's accesses were decided from, for rules that ask how a kernel
  // reached a location.
  const trace::KernelArguments* kernel_arguments = nullptr;
  trace::ExactAccesses exact;
  // Where the memory went (analyzer/memory), uses from `graph`; the
  // producers of its pieces described on demand.
  memory::MemoryModel memory_model;
  std::shared_ptr<memory::Producers> producers;
  // Merged traces: collectives whose last rank arrived late (by
  // kStragglerMinLateNs at least), costliest first.
  std::vector<ranks::Straggler> stragglers;
  trace::TimeOrigin origin;  // what the times shown count from
  // The steps the facts are limited to (--steps, --steady); "" for the whole run.
  std::string step_window;
  // The framework the program ran on (analyzer/trace/framework.h): what its
  // fixes are written for.
  trace::Framework framework = trace::Framework::Cpp;
  // Whether it recorded which module and op issued its work (framework_ranges).
  bool framework_context = false;
  // Its backward pass's threads (trace::backward_threads).
  std::set<std::pair<trace::ProcessId, int64_t>> backward_threads;
  // The level it was recorded at (`record --level`): what tracing added to
  // its launches depends on it (model/tracing_cost.h).
  model::TracingLevel tracing_level = model::TracingLevel::Full;
  // The tracer's own time between the program's calls (trace/tracer_time.h).
  trace::TracerTime tracer_time;

  const trace::TraceOperations& ops() const { return *operations; }
  // First and last timestamp of the trace.
  int64_t start_ns() const { return ops().span().start_ns; }
  int64_t end_ns() const { return ops().span().end_ns; }
  // Whether the call was made inside an NCCL or MPI call on its thread: the
  // library's own work (its work descriptors, its staging buffers), which the
  // program cannot change and the library's kernels read through pointers
  // no argument shows.
  bool inside_communication_call(NullableInt correlation) const;
  // Whether `alloc` is memory a library made for itself rather than the
  // program's (memory::library_owner): its kernels reach such memory through
  // pointers kept in device structures, which no launch argument shows, and
  // the program cannot remove it or its writes.
  bool library_memory(const Allocation& alloc) const;
  // Whether a copy or memset is a library's own: made inside an NCCL or MPI
  // call, or into or out of a library's memory (NCCL copying its device
  // structures in while it initializes).
  bool library_transfer(const Transfer& transfer) const;
  // Busy intervals of each device's GPU work (kernels, copies, memsets),
  // made on first use: most rules and the report's sections ask.
  const std::unordered_map<int64_t, Intervals>& busy_by_device() const;
  // The same cut to [from, to] and made anew, from the work that ran in it:
  // a short stretch of a long run needs no copy of every interval.
  std::unordered_map<int64_t, Intervals> busy_within(int64_t from, int64_t to) const;
  // One device's; none for a device without GPU work.
  const Intervals& busy_on(int64_t device) const;
  // Gives busy_by_device()'s intervals back (made again if asked for): a
  // million kernels' are 19 MB, under the transients of what is read after
  // their last reader.
  void release_busy_by_device() const { busy_by_device_made.reset(); }
  int64_t span_ns() const { return elapsed_ns(start_ns(), end_ns()); }
  // How many steps a saving over `steps` is spread over: the most any one
  // process has (ranks of a merged trace run theirs side by side); 0: none.
  int64_t step_count() const;
  // The median length of the steps (the steady steps diagnosed); 0: none.
  int64_t median_step_ns() const;
  // The time some traced process ran: its spans, overlaps counted once.
  int64_t run_ns() const;
  // The last timestamp of `process` (end_ns when it has none).
  int64_t process_end_ns(int64_t process) const;
  // Whether what `process` did up to `ns` was all in its start-up, before
  // its first steady step (false where it has no steps).
  bool within_startup(int64_t process, int64_t ns) const;
  // Whether `ns` falls while a framework's compiler ran in `process`
  // (trace::CompilerTime).
  bool compiling(int64_t process, int64_t ns) const;
  // How long it ran within [from, to].
  int64_t compiled_ns(int64_t process, int64_t from, int64_t to) const;

  // busy_by_device(), once made.
  mutable std::optional<std::unordered_map<int64_t, Intervals>> busy_by_device_made;
  // Whether the program's optimizer runs fused already: PyTorch's fused
  // optimizers (fused=True) launch multi-tensor kernels of a
  // Fused...MathFunctor (FusedAdamMathFunctor, FusedSgdMathFunctor), so
  // advice to fuse it is moot. Looked up once (rules ask per finding).
  bool optimizer_fused() const;
  mutable std::optional<bool> optimizer_fused_made;
  // compiling()'s, made on first use.
  const trace::CompilerTime& compiler_time() const;
  mutable std::optional<trace::CompilerTime> compiler_time_made;
};

// Reads the facts and builds the DVDG, sharing the model's rows (`trace`
// must outlive the facts); each phase shown on `progress` when one is given.
TraceFacts read_trace_facts(trace::Trace& trace, Progress* progress = nullptr);
// What the facts of the whole run hand to those of its steps: the steps'
// window keeps every tensor block, so their segments and the framework they
// say are the whole run's, and the blocks' rows need not be read again.
struct WholeRunModels {
  dvdg::Graph graph;
  memory::MemoryModel memory_model;
  memory::FrameworkSegments framework_segments;
  trace::Framework framework = trace::Framework::Cpp;
};
// The facts of `trace`, limited to steps, taking the DVDG and memory model
// of its whole run (read_trace_facts' before the limit) instead of building
// them again over the window: the memory model's devices are the window's.
TraceFacts read_window_facts(trace::Trace& trace, WholeRunModels&& whole_run, Progress* progress = nullptr);

// Names people read: "HtoD copy of 4 MiB", "memset of 1 MiB", "alloc #3 (device, 4 MiB)".
std::string transfer_name(const Transfer& transfer);
std::string allocation_name(const TraceFacts& facts, NullableInt alloc_id);
// "12.3 ms", "45 us", "800 ns".
std::string format_ns(int64_t ns);

}  // namespace apptracer::diagnose
