// The trace's operations, one model every analysis reads (Trace::operations()):
// every copy, memset, kernel, synchronization, allocation and host call, with
// the devices and NVTX ranges around them. Each is a view of its row in the
// model (packed_rows.h), never a copy of its columns: what an analysis asks
// (its stream, thread, issuing call, times as operations.h counts them,
// device, step, NVTX range, framework module and op) is read through the row
// or looked up here. Each kind's list is made on first use, so a command
// pays only for the kinds it reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/trace/framework_context.h"
#include "analyzer/trace/operations.h"
#include "analyzer/trace/packed_rows.h"
#include "apptracer/saturating.h"

namespace apptracer::trace {

class StepWindow;
class Trace;

// One end of a copy or memset: the memory it reads or writes.
struct Endpoint {
  NullableInt alloc;    // allocations.id
  NullableInt address;
  NullableInt offset;   // in its allocation
  NullableInt device;
  NullableInt numa;
  MemoryKind memory = MemoryKind::Unknown;
  int64_t span = 0;  // bytes from its first byte: a 2D/3D copy's rows at their pitch
};

// A copy (memcpys row, prefetches included) or a memset (memsets row).
class Transfer {
  // A column both tables have.
  template <typename Read>
  auto column(Read read) const {
    return copy_ ? read(*copy_) : read(*memset_);
  }

 public:
  explicit Transfer(const Packed<MemcpyRow>& copy) : copy_(&copy) {}
  explicit Transfer(const Packed<MemsetRow>& memset) : memset_(&memset) {}

  bool is_memset() const { return memset_ != nullptr; }
  // Its row: exactly one of them.
  const Packed<MemcpyRow>* copy_row() const { return copy_; }
  const Packed<MemsetRow>* memset_row() const { return memset_; }

  int64_t id() const { return column([](const auto& row) { return row.id; }); }
  ProcessId process() const { return column([](const auto& row) { return row.process; }); }
  CopyKind kind() const { return copy_ ? copy_->kind : CopyKind::Unknown; }
  int64_t bytes() const { return column([](const auto& row) { return row.bytes; }); }
  // A memset's source is its target (it reads nothing).
  Endpoint source() const;
  Endpoint destination() const;
  // A linear copy (or a memset) writes exactly its bytes, each from the byte
  // at the same position in the source; a 2D/3D copy's rows leave the pitch
  // between them.
  bool linear() const { return !copy_ || !copy_->width; }
  MemoryKind src_memory() const { return copy_ ? copy_->src_memory : memset_->memory; }
  MemoryKind dst_memory() const { return copy_ ? copy_->dst_memory : memset_->memory; }
  NullableInt src_alloc() const { return copy_ ? copy_->src_alloc_id : NullableInt(); }
  NullableInt dst_alloc() const { return copy_ ? copy_->dst_alloc_id : memset_->alloc_id; }
  NullableInt src_address() const { return copy_ ? copy_->src_address : NullableInt(); }
  NullableInt dst_address() const { return copy_ ? copy_->dst_address : memset_->address; }
  NullableInt src_offset() const { return copy_ ? copy_->src_offset : NullableInt(); }
  NullableInt dst_offset() const { return copy_ ? copy_->dst_offset : memset_->alloc_offset; }
  NullableInt src_numa() const { return copy_ ? copy_->src_numa_node : NullableInt(); }
  NullableInt dst_numa() const { return copy_ ? copy_->dst_numa_node : NullableInt(); }
  // The GPU whose memory it touches (operations.h copy_device).
  NullableInt device() const { return copy_ ? copy_device(*copy_) : memset_->device; }
  NullableInt stream() const { return column([](const auto& row) { return row.stream; }); }
  bool is_async() const { return column([](const auto& row) { return row.is_async != 0; }); }
  // The API call that issued it (api_calls.correlation_id).
  NullableInt correlation() const { return column([](const auto& row) { return row.call_correlation_id; }); }
  NullableInt api_start_ns() const { return column([](const auto& row) { return row.api_start_ns; }); }
  NullableInt gpu_start_ns() const { return column([](const auto& row) { return row.gpu_start_ns; }); }
  NullableInt gpu_end_ns() const { return column([](const auto& row) { return row.gpu_end_ns; }); }
  // The operation it is (operations.h): kind, times, device, stream.
  Operation operation() const { return copy_ ? operation_of(*copy_) : operation_of(*memset_); }

  bool timed() const { return gpu_start_ns() && gpu_end_ns(); }
  int64_t gpu_ns() const { return timed() ? elapsed_ns(*gpu_start_ns(), *gpu_end_ns()) : 0; }
  // The host endpoint's memory of a copy between host and device (else Unknown).
  MemoryKind host_memory() const;
  NullableInt host_numa() const;
  NullableInt host_alloc() const;

 private:
  const Packed<MemcpyRow>* copy_ = nullptr;
  const Packed<MemsetRow>* memset_ = nullptr;
};

// A kernel launch: its row, every column by name (kernel.row->grid_x), so a
// column declared in tables.def is readable with no change here.
struct Kernel {
  const Packed<KernelRow>* row = nullptr;
  std::string_view name;  // the demangled name where the trace has it, else "kernel"

  bool timed() const { return row->gpu_start_ns && row->gpu_end_ns; }
  int64_t gpu_ns() const { return timed() ? elapsed_ns(*row->gpu_start_ns, *row->gpu_end_ns) : 0; }
  Operation operation() const { return operation_of(*row); }
};

// A synchronization the host waited in.
class Sync {
 public:
  explicit Sync(const Packed<SyncRow>& row) : row_(&row) {}
  const Packed<SyncRow>& row() const { return *row_; }
  int64_t id() const { return row_->id; }
  ProcessId process() const { return row_->process; }
  SyncKind kind() const { return row_->kind; }
  NullableInt device() const { return row_->device; }
  NullableInt stream() const { return row_->stream; }
  NullableInt event_handle() const { return row_->event_handle; }
  NullableInt correlation() const { return row_->call_correlation_id; }
  NullableInt tid() const { return row_->tid; }
  int64_t start_ns() const { return row_->start_ns; }
  int64_t end_ns() const { return row_->end_ns; }

 private:
  const Packed<SyncRow>* row_;
};

class Allocation {
 public:
  explicit Allocation(const Packed<AllocationRow>& row) : row_(&row) {}
  const Packed<AllocationRow>& row() const { return *row_; }
  int64_t id() const { return row_->id; }
  ProcessId process() const { return row_->process; }
  AllocKind kind() const { return row_->kind; }
  int64_t address() const { return row_->address; }
  int64_t bytes() const { return row_->bytes; }
  NullableInt device() const { return row_->device; }
  NullableInt numa_node() const { return row_->numa_node; }
  NullableInt alloc_correlation() const { return row_->alloc_correlation_id; }
  NullableInt free_correlation() const { return row_->free_correlation_id; }
  int64_t alloc_ns() const { return row_->alloc_ns; }
  NullableInt free_ns() const { return row_->free_ns; }

 private:
  const Packed<AllocationRow>* row_;
};

// A runtime or driver call (the runtime one where both carry the same
// correlation id). Unlike the other views it holds what the analyses read
// of its row, not the row: a training trace has a million calls, and their
// rows, every column (129 MB), are streamed once instead of held. 48 bytes:
// its thread id in 32 bits, as Linux's are (below 2^22).
class HostCall {
 public:
  HostCall(const Packed<ApiCallRow>& row, std::string_view name)
      : name(name), id_(row.id), start_ns_(row.start_ns), end_ns_(row.end_ns),
        tid_(static_cast<int32_t>(row.tid)), process_(row.process) {}

  std::string_view name;  // "?" when the trace has none

  int64_t id() const { return id_; }
  int64_t tid() const { return tid_; }
  int64_t start_ns() const { return start_ns_; }
  int64_t end_ns() const { return end_ns_; }
  int64_t duration() const { return elapsed_ns(start_ns(), end_ns()); }
  ProcessId process() const { return process_; }

 private:
  int64_t id_, start_ns_, end_ns_;
  int32_t tid_;
  ProcessId process_;
};

struct NvtxRange {
  const Packed<NvtxRangeRow>* row = nullptr;
  std::string_view name;  // "?" when the trace has none

  NullableInt tid() const { return row->tid; }
  int64_t start_ns() const { return row->start_ns; }
  int64_t end_ns() const { return row->end_ns.value_or(row->start_ns); }  // still open: its start
  int64_t depth() const { return row->depth.value_or(0); }
};

struct Device {
  const Packed<DeviceRow>* row = nullptr;
  std::string_view name;

  int64_t id() const { return row->id; }
  NullableInt numa_node() const { return row->numa_node; }  // NULL or -1: unknown
  NullableInt cc_major() const { return row->cc_major; }    // compute capability
  NullableInt cc_minor() const { return row->cc_minor; }
};

// A step the analyses cover (steps.h), on the trace's clock.
struct StepSpan {
  int64_t process = kSingleProcess;
  int64_t number = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// A process's start-up: from its first call or operation to its first
// steady step (warm-up steps included).
struct StartUp {
  int64_t process = kSingleProcess;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t first_steady = 0;  // the first steady step's number
  std::string steps_from;    // how the steps were found ("NVTX ranges \"step\"", ...)
};

// When the trace's work and calls happened: the first and last timestamp,
// and each process's (a merged trace of runs made apart holds the time
// between them, when nothing it traced ran).
struct TraceSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::unordered_map<int64_t, std::pair<int64_t, int64_t>> processes;
};

class TraceOperations {
 public:
  // `trace` holds the model and outlives it.
  explicit TraceOperations(Trace& trace) : trace_(&trace) {}

  const std::vector<Transfer>& copies() const;  // memcpys rows, prefetches included, by id
  const std::vector<Transfer>& memsets() const;  // by id
  const std::vector<Kernel>& kernels() const;    // by id
  const std::vector<Sync>& syncs() const;        // by start
  const std::vector<Allocation>& allocations() const;  // by id
  // Every runtime call, and driver calls no runtime call made (CUDA 13 gives
  // a driver call inside a runtime call the runtime call's correlation id), by start.
  const std::vector<HostCall>& calls() const;
  const std::vector<NvtxRange>& nvtx() const;  // by start
  const std::vector<Device>& devices() const;  // by id

  const Transfer* copy(int64_t id) const;
  const Transfer* memset(int64_t id) const;
  const Kernel* kernel(int64_t id) const;
  const Allocation* allocation(NullableInt id) const;
  const Device* device(NullableInt id) const;
  // The call with this correlation id: the runtime call where a driver call
  // has the same.
  const HostCall* call(NullableInt correlation) const;
  // The calling thread's next host call after `call`, nullptr when none.
  const HostCall* next_call_on_thread(const HostCall& call) const;
  // "cudaMemcpy (thread 4242)", or "" when the call is unknown.
  std::string call_site(NullableInt correlation) const;
  // The innermost NVTX range open on `tid` at `ns` ("" when none); with no
  // thread known, any thread's.
  std::string nvtx_at(NullableInt tid, int64_t ns) const;
  // Which framework module and op issued a kernel, or the work of the call
  // with this correlation id (framework_context.h).
  FrameworkContext framework_context(const Kernel& kernel) const;
  FrameworkContext framework_context(ProcessId process, NullableInt correlation) const;
  // How long thread `tid` ran inside framework scopes whose names begin with
  // `prefix` during [from, to) (framework_context.h); 0 without framework ranges.
  int64_t time_in_scopes(ProcessId process, int64_t tid, int64_t from, int64_t to, std::string_view prefix) const;
  // "module layer1.0 (backward), op aten::add_": as much of it as is known;
  // "" when neither.
  std::string framework_label(const FrameworkContext& context) const;
  // The number of the step an operation was issued in (steps.h).
  std::optional<int64_t> step_of(const Operation& op) const;
  // An interned name (strings.id), `fallback` for none.
  std::string_view string(NullableInt id, std::string_view fallback) const;

  // The host calls with their lookup by correlation id, as made; none where
  // calls() was not asked for. For the window of a trace: keep_calls().
  struct Calls {
    std::vector<HostCall> calls;
    std::vector<int64_t> correlations;
    std::vector<uint32_t> of_correlation;
  };
  std::optional<Calls> release_calls();
  // The calls of `whole` (this trace's before it was limited to `window`)
  // that the window holds, as calls() would read them: a window of most of a
  // long run would stream a million calls again to make the same list less
  // its start-up.
  void keep_calls(Calls whole, const StepWindow& window);

  const TraceSpan& span() const;
  // The steps the analyses cover, by process and start: those of the
  // window (Trace::limit_to_steps), or, for the whole run, the steady ones;
  // none where no process has steps.
  const std::vector<StepSpan>& steps() const;
  // Each process's start-up, where it has steady steps.
  const std::vector<StartUp>& startups() const;
  // When start-up ended: the earliest first steady step of a process; none
  // when no process has steps.
  std::optional<int64_t> startup_end_ns() const;

 private:
  void find_calls() const;
  void index_calls_by_thread() const;
  void find_steps() const;

  Trace* trace_;
  // Each made on first use (the model is the trace's, read through const).
  mutable std::optional<std::vector<Transfer>> copies_, memsets_;
  mutable std::optional<std::vector<Kernel>> kernels_;
  mutable std::optional<std::vector<Sync>> syncs_;
  mutable std::optional<std::vector<Allocation>> allocations_;
  mutable std::optional<std::vector<HostCall>> calls_;
  // The calls' correlation ids, ascending, and the position in calls_ of
  // each one's call: two lists, 12 bytes a call where pairs take 16.
  mutable std::vector<int64_t> call_correlations_;
  mutable std::vector<uint32_t> call_of_correlation_;
  mutable std::unordered_map<int64_t, std::vector<uint32_t>> calls_by_thread_;  // into calls_, by start
  mutable std::optional<std::vector<NvtxRange>> nvtx_;
  mutable std::optional<std::vector<Device>> devices_;
  mutable std::optional<TraceSpan> span_;
  mutable std::optional<std::vector<StepSpan>> steps_;
  mutable std::vector<StartUp> startups_;
  mutable std::optional<int64_t> startup_end_ns_;
};

}  // namespace apptracer::trace
