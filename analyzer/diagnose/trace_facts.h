// What the diagnoses read from a trace, through the trace model: copies,
// memsets, kernels, synchronizations, allocations, the host calls that
// issued them, NVTX ranges, unified-memory events and hints, devices, and
// the DVDG built by analyzer/dvdg. Rules look things up here instead of each
// reading the trace. Compact, for long runs' millions of launches: names are
// views of text held once (TraceFacts::names), nullable numbers 8 bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analyzer/ranks/stragglers.h"
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

// A runtime or driver call (the runtime one where both carry the same
// correlation id).
struct HostCall {
  int64_t id = 0;  // api_calls.id
  std::string_view name;
  int64_t tid = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t duration() const { return elapsed_ns(start_ns, end_ns); }
};

// A copy (memcpys row, prefetches included) or a memset (memsets row).
struct Transfer {
  bool is_memset = false;
  int64_t id = 0;
  CopyKind kind = CopyKind::Unknown;  // memsets: Unknown
  int64_t bytes = 0;
  MemoryKind src_memory = MemoryKind::Unknown;  // memsets: the target's memory
  MemoryKind dst_memory = MemoryKind::Unknown;
  NullableInt src_alloc, dst_alloc;  // memsets: dst only
  NullableInt src_address, dst_address;
  NullableInt src_offset, dst_offset;
  NullableInt src_numa, dst_numa;
  NullableInt device;  // the GPU whose memory it touches
  NullableInt stream;
  bool is_async = false;
  NullableInt correlation;
  NullableInt api_start_ns;
  NullableInt gpu_start_ns, gpu_end_ns;

  bool timed() const { return gpu_start_ns && gpu_end_ns; }
  int64_t gpu_ns() const { return timed() ? elapsed_ns(*gpu_start_ns, *gpu_end_ns) : 0; }
  // The host endpoint's memory of a copy between host and device (else Unknown).
  MemoryKind host_memory() const;
  NullableInt host_numa() const;
  NullableInt host_alloc() const;
};

// A kernels row as the trace model holds it, every column by name
// (kernel.row->grid_x): a column declared in tables.def is readable by a rule
// with no change here. The row is the model's own, not a copy (a long run has
// millions), so the trace outlives the facts read from it.
struct Kernel {
  const trace::Packed<KernelRow>* row = nullptr;
  std::string_view name;  // the demangled name where the trace has it
  // The framework module that launched it ("" where the trace has no
  // framework ranges or none was running: analyzer/trace/framework_context.h).
  std::string_view module;
  trace::ModulePhase module_phase = trace::ModulePhase::None;
  bool timed() const { return row->gpu_start_ns && row->gpu_end_ns; }
  int64_t gpu_ns() const { return timed() ? elapsed_ns(*row->gpu_start_ns, *row->gpu_end_ns) : 0; }
};

struct Sync {
  int64_t id = 0;
  SyncKind kind = SyncKind::Device;
  NullableInt device, stream, correlation, tid;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t process = trace::kSingleProcess;
};

struct Allocation {
  int64_t id = 0;
  AllocKind kind = AllocKind::Device;
  int64_t address = 0;
  int64_t bytes = 0;
  NullableInt device, numa_node;
  NullableInt alloc_correlation, free_correlation;
  int64_t alloc_ns = 0;
  NullableInt free_ns;
  int64_t process = trace::kSingleProcess;
  // It holds a block a framework's allocator handed out (a PyTorch caching
  // allocator segment).
  bool holds_framework_blocks = false;
};

struct NvtxRange {
  std::string_view name;
  NullableInt tid;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t depth = 0;
};

struct Advice {
  int64_t id = 0;
  MemAdvice advice = MemAdvice::SetPreferredLocation;
  NullableInt alloc_id;
  int64_t ns = 0;
};

struct Device {
  int64_t id = 0;
  std::string name;
  NullableInt numa_node;  // NULL or -1: unknown
  NullableInt cc_major, cc_minor;  // compute capability
};

// A step the facts cover (analyzer/trace/steps.h), on the trace's clock.
struct StepSpan {
  int64_t process = trace::kSingleProcess;
  int64_t number = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// A process's start-up: from its first call or operation to its first
// steady step (warm-up steps included).
struct StartUp {
  int64_t process = trace::kSingleProcess;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t first_steady = 0;  // the first steady step's number
  std::string steps_from;    // how the steps were found ("NVTX ranges \"step\"", ...)
};

// GPU work of one device as busy intervals, merged and sorted.
using Intervals = std::vector<std::pair<int64_t, int64_t>>;

struct TraceFacts {
  // The text of every name the facts show, once (a node-based map: views of
  // it stay valid as it grows and when the facts move).
  std::unordered_map<int64_t, std::string> names;  // by strings.id
  std::vector<Transfer> copies;  // memcpys rows, prefetches included, by id
  std::vector<Transfer> memsets;
  std::vector<Kernel> kernels;   // by id
  std::vector<Sync> syncs;
  std::vector<Allocation> allocations;  // by id
  std::vector<NvtxRange> nvtx;
  std::vector<Advice> advice;
  std::vector<Device> devices;
  std::vector<HostCall> all_calls;  // every runtime call (and driver calls no runtime call made), by start
  // (correlation id, position in all_calls) by correlation id: the runtime
  // call where a driver call has the same.
  std::vector<std::pair<int64_t, uint32_t>> calls;
  std::unordered_map<int64_t, std::vector<uint32_t>> calls_by_thread;  // into all_calls, by start
  // NCCL and MPI calls per thread, and where framework allocators' blocks
  // lay (analyzer/memory/memory_owners.h).
  memory::CommunicationCalls communication_calls;
  memory::FrameworkSegments framework_segments;
  trace::UmTrace um;
  // The program used managed memory, and its migrations were not asked for
  // (meta um_counters): the unified-memory rules have nothing to read.
  bool um_migrations_not_recorded = false;
  dvdg::Graph graph;
  // Where the memory went (analyzer/memory), uses from `graph`; the
  // producers of its pieces described on demand.
  memory::MemoryModel memory_model;
  std::shared_ptr<memory::Producers> producers;
  // Merged traces: collectives whose last rank arrived late (by
  // kStragglerMinLateNs at least), costliest first.
  std::vector<ranks::Straggler> stragglers;
  int64_t start_ns = 0;  // first and last timestamp of the trace
  int64_t end_ns = 0;
  // Per process, its first and last timestamp: a merged trace of runs made
  // apart holds the time between them, when nothing it traced ran.
  std::unordered_map<int64_t, std::pair<int64_t, int64_t>> process_spans;
  trace::TimeOrigin origin;  // what the times shown count from
  // When start-up ended: the earliest first steady step of a process
  // (analyzer/trace/steps.h); none when no process has steps.
  std::optional<int64_t> startup_end_ns;
  // The steps the facts are limited to (--steps, --steady); "" for the whole run.
  std::string step_window;
  // The steps the facts cover, by process and start: those of the window,
  // or, for the whole run, the steady ones; none where no process has steps.
  std::vector<StepSpan> steps;
  // Each process's start-up, where it has steady steps.
  std::vector<StartUp> startups;
  // The framework the program ran on (analyzer/trace/framework.h): what its
  // fixes are written for.
  trace::Framework framework = trace::Framework::Cpp;
  // The level it was recorded at (`record --level`): what tracing added to
  // its launches depends on it (model/tracing_cost.h).
  model::TracingLevel tracing_level = model::TracingLevel::Full;

  const HostCall* call(NullableInt correlation) const;
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
  const Allocation* allocation(NullableInt id) const;
  const Kernel* kernel(int64_t id) const;
  const Transfer* copy(int64_t id) const;
  const Device* device(NullableInt id) const;
  // The calling thread's next host call after `call`, nullptr when none.
  const HostCall* next_call_on_thread(const HostCall& call) const;
  // The innermost NVTX range open on `tid` at `ns` ("" when none); with no
  // thread known, any thread's.
  std::string nvtx_at(NullableInt tid, int64_t ns) const;
  // "cudaMemcpy (thread 4242)", or "" when the call is unknown.
  std::string call_site(NullableInt correlation) const;
  // Busy intervals of each device's GPU work (kernels, copies, memsets).
  std::unordered_map<int64_t, Intervals> busy_by_device() const;
  int64_t span_ns() const { return elapsed_ns(start_ns, end_ns); }
  // How many steps a saving over `steps` is spread over: the most any one
  // process has (ranks of a merged trace run theirs side by side); 0: none.
  int64_t step_count() const;
  // The time some traced process ran: its spans, overlaps counted once.
  int64_t run_ns() const;
  // The last timestamp of `process` (end_ns when it has none).
  int64_t process_end_ns(int64_t process) const;
};

// Reads the facts and builds the DVDG, sharing the model's rows (`trace`
// must outlive the facts); each phase shown on `progress` when one is given.
TraceFacts read_trace_facts(trace::Trace& trace, Progress* progress = nullptr);

// Sorts and merges overlapping intervals in place.
void merge_intervals(Intervals& intervals);
// Total length of merged intervals inside [from, to].
int64_t covered_ns(const Intervals& merged, int64_t from, int64_t to);

// Names people read: "HtoD copy of 4 MiB", "memset of 1 MiB", "alloc #3 (device, 4 MiB)".
std::string transfer_name(const Transfer& transfer);
std::string allocation_name(const TraceFacts& facts, NullableInt alloc_id);
// "12.3 ms", "45 us", "800 ns".
std::string format_ns(int64_t ns);

}  // namespace apptracer::diagnose
