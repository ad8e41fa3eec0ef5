// Fixed-size records: what the tracer's hot path writes into per-thread
// buffers and its writer turns into rows. One 128-byte layout for every event
// so a buffer is a plain array and appending is a copy and a counter bump.
//
// Pointers in records must stay valid until the writer reads them: CUPTI's
// function names are global constants; everything else that is text is
// interned first (see tracer/string_table.h) and carried as an id.
#pragma once

#include <cstdint>
#include <type_traits>

#include "apptracer/enums.h"

namespace apptracer {

enum class RecordType : uint8_t {
  ApiCall = 1,
  Allocation,
  Free,
  Memcpy,
  Memset,
  Kernel,
  Sync,
  StreamEvent,
  GpuKernel,
  GpuMemcpy,
  GpuMemset,
  Thread,
  KernelArgs,
  MemAdvice,
  UmEvent,
  SubAllocation,
  ExactLaunch,
  ExactIntervals,
  GraphNode,
  Nvtx,
  Communicator,
  Collective,
  CollectivePlan,
  CollectiveDone,
  NcclLaunch,
  Stream,
  FrameworkRange,
  NcclGroup,
};

// Every record names the API call it came from (0 for activity-only work).
struct ApiCallRecord {
  uint64_t start_ns;
  uint64_t end_ns;
  int64_t stream;  // CUPTI stream id of the stream the call names, -1 when none
  uint32_t parent_correlation_id;  // the runtime call a driver call served, or 0
  int32_t return_code;
  int32_t device;  // the calling thread's current device, -1 when unknown
  uint16_t cbid;
  ApiDomain domain;
  const char* name;  // CUPTI's functionName: a global constant
  // A runtime call's first successful driver call, which then has no record
  // of its own (CUPTI's functionName), or nullptr.
  const char* driver_name;
};

// Host memory's NUMA node is read by the writer (a syscall: never on the
// program's threads).
struct AllocationRecord {
  uint64_t alloc_id;  // assigned by the allocation registry
  uint64_t address;
  uint64_t bytes;
  uint64_t pitch;
  uint64_t ns;
  uint32_t flags;
  int32_t device;     // -1 for host memory
  uint32_t alloc_tid;  // the allocating thread when not the recording one (host blocks), else 0
  // Page-locked memory: its NUMA node + 1, read in the allocating call (its
  // pages are fixed from then on, and may be freed before the writer could
  // look); 0 when not read there.
  int32_t numa_node_plus_one;
  AllocKind kind;
};

struct FreeRecord {
  uint64_t alloc_id;
  uint64_t ns;
};

// Endpoints are raw addresses: the writer resolves them to allocations and
// host blocks (and reads host pages' NUMA node), never the program's thread.
struct MemcpyRecord {
  uint64_t src;
  uint64_t dst;
  uint64_t bytes;
  uint64_t width;   // 2D/3D: bytes per row; else 0
  uint64_t height;  // 2D/3D: rows (times depth); else 0
  uint64_t src_pitch;
  uint64_t dst_pitch;
  uint64_t api_start_ns;
  int64_t stream;      // CUPTI stream id where no activity will say (prefetches), else -1
  int32_t src_device;  // peer copies and prefetch targets name devices; else -1
  int32_t dst_device;
  CopyKind kind;  // from the call's direction argument; Unknown for "default"
  bool is_async;
  // Large copies that may go to the host: of the destination's sampled pages,
  // how many were mapped and how many not yet touched as the call began
  // (tracer/translate/copy_destination.h); 0 and 0 when not probed.
  uint8_t dst_pages_mapped;
  uint8_t dst_pages_untouched;
};

struct MemsetRecord {
  uint64_t address;
  uint64_t bytes;
  uint64_t width;  // 2D: bytes per row; else 0
  uint64_t height;
  uint64_t pitch;
  uint64_t api_start_ns;
  uint32_t value;
  uint8_t element_size;
  bool is_async;
};

// What a launch's call says of the launch that is stored as it is: a field
// per kernels column tables.def declares with APPTRACER_LAUNCH_COLUMN, which
// the store copies into the row by the same declaration. A value added there
// needs only its capture.
struct LaunchValues {
#define APPTRACER_LAUNCH_COLUMN(name, type, record_type, meaning, doc) record_type name;
#include "apptracer/tables.def"
};

struct KernelRecord {
  uint64_t function_handle;
  uint64_t api_start_ns;
  uint32_t name_id;  // interned mangled name, 0 when unknown
  LaunchValues launch;
  int32_t device;
  uint16_t arg_words;  // candidate pointer words, sent in KernelArgs records after this one
  bool args_captured;  // the parameters were read: KernelArgs records follow, at least one
  LaunchKind launch_kind;
};

// An 8-byte-aligned word of a launch's parameter buffer that may be a pointer
// (it falls inside the range of addresses CUDA has handed out).
struct KernelArgWord {
  uint64_t value;
  uint32_t offset;       // in the parameter buffer
  uint16_t param_index;  // the parameter holding it (UINT16_MAX: layout unknown)
  uint16_t param_size;
};

// Follows its Kernel record (same own_correlation_id), as many as needed.
struct KernelArgsRecord {
  static constexpr int kWords = 6;
  uint8_t count;
  bool last;
  KernelArgWord words[kWords];
};

struct SyncRecord {
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t event_handle;
  int64_t stream;  // CUPTI stream id, -1 when none
  int32_t device;
  SyncKind kind;
};

struct StreamEventRecord {
  uint64_t ns;
  uint64_t event_handle;
  int64_t stream;
  int32_t device;
  StreamEventKind kind;
};

// A stream CUPTI reported (activity only: correlation_id is the call that
// created it, 0 for a context's legacy default stream).
struct StreamRecord {
  uint32_t stream;
  uint32_t context_id;
  uint32_t priority;
  StreamKind kind;
};

// cudaMemAdvise / cuMemAdvise and stream attachment of managed memory.
struct MemAdviceRecord {
  uint64_t address;
  uint64_t bytes;
  uint64_t ns;
  int64_t stream;  // CUPTI stream id (attachments), -1 when none
  int32_t location_id;
  MemAdvice advice;
  MemLocationType location_type;
};

// GPU activity (CUPTI activity API), joined to the records above by correlation id.
struct GpuKernelRecord {
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t graph_node_id;
  uint32_t name_id;
  uint32_t stream;
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t static_shared_bytes;
  uint32_t dynamic_shared_bytes;
  uint32_t registers_per_thread;
  int32_t device;
};

struct GpuMemcpyRecord {
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t bytes;
  uint64_t graph_node_id;
  uint32_t stream;
  int32_t device;
  int32_t src_device;  // peer copies; else -1
  int32_t dst_device;
  CopyKind kind;
  MemoryKind src_memory;
  MemoryKind dst_memory;
  bool is_async;
};

struct GpuMemsetRecord {
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t bytes;
  uint64_t graph_node_id;
  uint32_t value;
  uint32_t stream;
  int32_t device;
  MemoryKind memory;
};

// A CUPTI unified-memory counter record (activity-only).
struct UmEventRecord {
  uint64_t start_ns;
  uint64_t end_ns;  // 0 where CUPTI gives none
  uint64_t address;
  uint64_t value;
  int32_t src_device;  // -1: the host side
  int32_t dst_device;
  uint32_t flags;
  UmCounterKind counter_kind;
};

// What a framework allocator reported (tracer/frameworks/): PyTorch's
// caching-allocator actions, CuPy's pool hooks.
enum class SubAllocationEvent : uint8_t {
  Alloc,          // a block handed to the program
  FreeRequested,  // the program released it (PyTorch: the GPU may still use it)
  Free,           // back in the pool, reusable
  SegmentAlloc,   // the allocator took a CUDA allocation (a cudaMalloc it just made)
  SegmentFree,
  SegmentMap,     // expandable segments: pages mapped into the reserved range
  SegmentUnmap,
};

// Recorded on the allocating thread, inside the allocator: no correlation id.
struct SubAllocationRecord {
  uint64_t address;
  uint64_t bytes;        // requested (segments: the segment's or mapped range's size)
  uint64_t block_bytes;  // what the allocator set aside, 0 where it does not say
  uint64_t ns;
  uint64_t stream;       // the cudaStream_t the allocator named (0: legacy default)
  int64_t pool_id;       // PyTorch private pool (graph > 0, user pool < 0); 0: default
  int32_t device;
  SubAllocationEvent event;
  SubAllocator allocator;
};

// `--exact`: one kernel launch as the GPU saw it, read back from the
// sanitizer's aggregation buffer (tracer/exact/). Its byte ranges follow in
// ExactIntervals records carrying the same launch_index.
struct ExactLaunchRecord {
  uint64_t launch_index;  // from 1, in the sanitizer's launch order
  uint64_t api_start_ns;  // addresses resolve to what was allocated then
  uint32_t name_id;       // interned function name, 0 when unknown
  uint32_t pages;         // 4 KiB pages the GPU recorded
  uint32_t intervals;     // ranges in the ExactIntervals records that follow
  int32_t device;
  int32_t graph_position;  // node launches of a graph launch: from 0; else -1
  ExactGap incomplete;
  bool approximate;  // the GPU table overflowed: some ranges are bounds
};

// Coalesced ranges of one launch, before they are split by allocation.
struct ExactIntervalsRecord {
  static constexpr int kIntervals = 5;
  uint64_t launch_index;
  uint64_t lo[kIntervals];
  uint64_t hi[kIntervals];
  AccessKind access[kIntervals];
  uint8_t count;
  uint8_t approximate_mask;  // bit i: range i is a bound
};

// CUDA graph nodes, from CUPTI's resource callbacks. Nodes are named by
// CUPTI's ids (cuptiGetGraphNodeId); GPU activity of a graph launch names the
// exec's node it ran, a clone of the node the program made. ParamsSet: an
// exec's node got new parameters (cudaGraphExecKernelNodeSetParams,
// cudaGraphExecUpdate), for launches after `ns`.
enum class GraphNodeEvent : uint8_t { Created, Cloned, ParamsSet };

// A kernel node's parameters as the driver holds them. When args_captured,
// its candidate pointer words follow in KernelArgs records; the writer
// resolves them again at each launch of the graph.
struct KernelNodeParams {
  uint64_t function_handle;
  uint32_t name_id;
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t dynamic_shared_bytes;
  bool args_captured;
};

// A copy node: the first byte of each endpoint and the bytes it moves.
struct CopyNodeParams {
  uint64_t src;
  uint64_t dst;
  uint64_t bytes;
  CopyKind kind;
};

struct MemsetNodeParams {
  uint64_t address;
  uint64_t bytes;  // width * element size * height
  uint32_t value;
  uint8_t element_size;
};

struct GraphNodeRecord {
  uint64_t node_id;
  uint64_t template_node_id;  // Cloned: the node it was cloned from; else 0
  uint64_t ns;
  uint32_t graph_id;  // CUPTI's id of its graph (a clone's: its exec's)
  GraphNodeEvent event;
  GraphNodeType type;
  bool captured;    // made by stream capture (a launch, copy, ... on a capturing stream)
  bool has_params;  // `params` holds the member `type` names (kernel, memcpy, memset)
  union {
    KernelNodeParams kernel;
    CopyNodeParams copy;
    MemsetNodeParams memset;
  } params;
};

// NVTX, recorded by the tracer as the process's NVTX injection
// (translate/nvtx_injection). The writer pairs pushes with pops per thread
// and domain, starts with ends by range id.
enum class NvtxEvent : uint8_t { Push, Pop, Start, End, Mark };

struct NvtxRecord {
  uint64_t ns;
  uint64_t range_id;   // Start/End: the id the tracer returned
  uint32_t name_id;    // the message (Push, Start, Mark)
  uint32_t domain_id;  // the domain's name; 0: the default domain
  NvtxEvent event;
};

// --- collectives (NCCL, MPI): tracer/collectives/ ------------------------------

// A communicator became known (an interposed init, split or dup, or NCCL's
// profiler plugin announcing it), or ended.
struct CommunicatorRecord {
  uint64_t comm_id;         // rank-invariant (tables.def, communicators.comm_id)
  uint64_t parent_comm_id;  // 0: none
  uint64_t handle;          // ncclComm_t / MPI_Comm
  uint64_t ns;
  // The interposed call that made it (NCCL's init or split), on the record's
  // thread: when it was entered (0: not seen); it returned at `ns`.
  uint64_t call_start_ns;
  int32_t rank;
  int32_t nranks;
  int32_t n_nodes;     // -1 when unknown
  int32_t world_rank;  // -1 when unknown
  int32_t device;      // -1 when unknown
  uint32_t name_id;    // interned, 0 when none
  CommLibrary library;
  bool ended;  // destroyed or freed at `ns`
};

enum CollectiveFlags : uint8_t {
  kCollectiveMpi = 1,             // else NCCL
  kCollectivePlanFollows = 2,     // NCCL's profiler saw the call: plan records follow
  kCollectiveNonblocking = 4,     // MPI_I*: a CollectiveDone record follows
  kCollectiveGraphCaptured = 8,   // captured into a CUDA graph: runs at each replay
};

// One operation as this rank called it. `seq` is kUnassigned where the
// writer numbers it (MPI point to point, whose key includes the tag; NCCL
// point to point seen only by the profiler, whose peer comes with its plan).
struct CollectiveRecord {
  static constexpr uint32_t kUnassigned = UINT32_MAX;
  uint64_t op_id;  // process-wide, in call order
  uint64_t comm_id;
  uint64_t count;
  uint64_t send;  // addresses; 0 when none
  uint64_t recv;
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t send_bytes;  // MPI: what the call moves; NCCL: 0, the writer derives them
  uint64_t recv_bytes;
  int64_t stream;  // CUPTI stream id, -1 when none
  uint32_t seq;
  uint32_t group;  // outermost ncclGroupStart..End on this thread, 0 outside one
  int32_t rank;
  int32_t nranks;
  int32_t root_or_peer;  // -1 when neither
  int32_t tag;           // MPI point to point; else 0
  uint32_t element_bytes;
  CollectiveKind kind;
  DataType datatype;
  ReduceOp op;  // 0: none
  uint8_t flags;  // CollectiveFlags
};

// What NCCL planned for an operation (its profiler's Coll or P2p event,
// after the plan's kernel launch on the same thread).
struct CollectivePlanRecord {
  static constexpr uint64_t kNoNcclSeq = UINT64_MAX;
  uint64_t op_id;
  uint64_t nccl_seq;
  uint64_t send;  // the plan's buffers: operations only the profiler saw have no others
  uint64_t recv;
  uint32_t seq;   // point to point only the profiler saw: numbered here; else kUnassigned
  int32_t peer;   // -1 for collectives
  uint8_t channels;
  bool has_algorithm;
  CollAlgorithm algorithm;
  CollProtocol protocol;
};

// A nonblocking MPI operation completed (a wait or test saw it).
struct CollectiveDoneRecord {
  uint64_t op_id;
  uint64_t ns;
  uint64_t bytes;  // receives: what arrived; UINT64_MAX when unknown
  int32_t source;  // receives: the actual sender; -1 when unknown
  int32_t tag;
  bool cancelled;
};

// NCCL's profiler bracketing a plan's kernel launch: the kernel launched on
// this thread between begin and end ran the plan records that follow.
struct NcclLaunchRecord {
  bool begin;
};

// An outermost ncclGroupEnd on this thread returned: NCCL issued the group's
// operations inside it, and on their first use set up their connections
// (allocating their buffers) there too.
struct NcclGroupRecord {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t group;  // the operations' CollectiveRecord::group
};

struct ThreadRecord {
  uint64_t ns;
  char name[16];  // pthread names are at most 15 characters
};

// A framework's range on the recording thread (tracer/frameworks/
// framework_ranges.h): the writer pairs each push with the next pop of the
// same kind on its thread.
// A framework range on one thread, recorded when it ends.
struct FrameworkRangeRecord {
  uint64_t start_ns;
  uint64_t end_ns;
  int64_t seq;       // torch's autograd sequence number; -1: none
  uint32_t name_id;  // the interned name
  uint32_t depth;    // ranges of its kind open around it on its thread
  FrameworkRangeKind kind;
};

struct Record {
  RecordType type;
  uint32_t tid;
  // The outermost API call on this thread when the record was made (what GPU
  // activity carries), and the call that made it (a driver call nested in
  // that runtime call, or the same call). 0 for activity-only records.
  uint32_t correlation_id;
  uint32_t own_correlation_id;
  union {
    ApiCallRecord api;
    AllocationRecord allocation;
    FreeRecord free;
    MemcpyRecord memcpy;
    MemsetRecord memset;
    KernelRecord kernel;
    SyncRecord sync;
    StreamEventRecord stream_event;
    GpuKernelRecord gpu_kernel;
    GpuMemcpyRecord gpu_memcpy;
    GpuMemsetRecord gpu_memset;
    ThreadRecord thread;
    KernelArgsRecord kernel_args;
    MemAdviceRecord mem_advice;
    UmEventRecord um_event;
    SubAllocationRecord sub_allocation;
    ExactLaunchRecord exact_launch;
    ExactIntervalsRecord exact_intervals;
    GraphNodeRecord graph_node;
    NvtxRecord nvtx;
    CommunicatorRecord communicator;
    CollectiveRecord collective;
    CollectivePlanRecord collective_plan;
    CollectiveDoneRecord collective_done;
    NcclLaunchRecord nccl_launch;
    StreamRecord stream;
    FrameworkRangeRecord framework_range;
    NcclGroupRecord nccl_group;
  };
};

static_assert(std::is_trivially_copyable_v<Record>, "records are copied as bytes");
static_assert(sizeof(Record) <= 128, "keep records to two cache lines");

}  // namespace apptracer
