// Enumerations stored as integers in the trace database.
//
// Each enum is declared once through an X-macro so that the C++ enum, its
// printable names and the `enum_values` table written into every trace come
// from the same list. The numbers are part of the database contract: append,
// never renumber.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace apptracer {

// Which API family a row of `api_calls` belongs to.
#define APPTRACER_API_DOMAINS(X) \
  X(Runtime, 1, "runtime")       \
  X(Driver, 2, "driver")         \
  X(Nvtx, 3, "nvtx")             \
  X(Host, 4, "host")

// What kind of memory an `allocations` row describes.
#define APPTRACER_ALLOC_KINDS(X)                  \
  X(Device, 1, "device")                          \
  X(PinnedHost, 2, "pinned host")                 \
  X(WriteCombinedHost, 3, "write-combined host")  \
  X(MappedHost, 4, "mapped host")                 \
  X(RegisteredHost, 5, "registered host")         \
  X(Managed, 6, "managed")                        \
  X(PageableHost, 7, "pageable host")             \
  X(Pool, 8, "pool")                              \
  X(VmmReserve, 9, "vmm reserve")                 \
  X(VmmPhysical, 10, "vmm physical")              \
  X(VmmMapping, 11, "vmm mapping")                \
  X(Array, 12, "array")                           \
  X(IpcImport, 13, "ipc import")                  \
  X(ImportedHandle, 14, "imported handle")

// The memory an endpoint of a copy (or a memset target) lives in. Numbered
// like CUPTI's CUpti_ActivityMemoryKind so activity records map directly.
#define APPTRACER_MEMORY_KINDS(X)    \
  X(Unknown, 0, "unknown")           \
  X(Pageable, 1, "pageable")         \
  X(Pinned, 2, "pinned")             \
  X(Device, 3, "device")             \
  X(Array, 4, "array")               \
  X(Managed, 5, "managed")           \
  X(DeviceStatic, 6, "device static") \
  X(ManagedStatic, 7, "managed static")

// Direction of a `memcpys` row. Array endpoints are folded into host/device.
#define APPTRACER_COPY_KINDS(X) \
  X(Unknown, 0, "unknown")      \
  X(HtoD, 1, "HtoD")            \
  X(DtoH, 2, "DtoH")            \
  X(DtoD, 3, "DtoD")            \
  X(HtoH, 4, "HtoH")            \
  X(PtoP, 5, "PtoP")            \
  X(Prefetch, 6, "prefetch")

// What a `syncs` row waited for.
#define APPTRACER_SYNC_KINDS(X) \
  X(Device, 1, "device")        \
  X(Stream, 2, "stream")        \
  X(Event, 3, "event")          \
  X(Context, 4, "context")

// `stream_events` rows: an event recorded into a stream, or a stream made to
// wait for an event. Together they order work across streams.
#define APPTRACER_STREAM_EVENT_KINDS(X) \
  X(Record, 1, "record")                \
  X(Wait, 2, "wait")

// How a `streams` row's stream orders with the legacy default stream,
// CUPTI's numbers (CUpti_ActivityStreamFlag): work on the legacy stream
// waits for all earlier work of the context's blocking streams, and theirs
// for it; a non-blocking stream does neither.
#define APPTRACER_STREAM_KINDS(X)     \
  X(Unknown, 0, "unknown")            \
  X(Blocking, 1, "blocking")          \
  X(NonBlocking, 2, "non-blocking")   \
  X(Legacy, 3, "legacy default")

// How a kernel was launched.
#define APPTRACER_LAUNCH_KINDS(X)      \
  X(Driver, 1, "driver")               \
  X(DriverEx, 2, "driver ex")          \
  X(Cooperative, 3, "cooperative")     \
  X(Graph, 4, "graph")                 \
  X(ActivityOnly, 5, "activity only")

// How a kernel accesses the memory a parameter points to.
#define APPTRACER_ACCESS_KINDS(X) \
  X(Unknown, 0, "unknown")        \
  X(Read, 1, "r")                 \
  X(Write, 2, "w")                \
  X(ReadWrite, 3, "rw")

// How an access was decided.
#define APPTRACER_ACCESS_SOURCES(X)            \
  X(None, 0, "none")                           \
  X(Assumed, 1, "assumed")                     \
  X(ConstSignature, 2, "const signature")      \
  X(Sanitizer, 3, "sanitizer")                 \
  X(Library, 4, "library")

// `um_events` rows: CUPTI's unified-memory counter kinds, same numbers.
#define APPTRACER_UM_COUNTER_KINDS(X)             \
  X(Unknown, 0, "unknown")                        \
  X(BytesHtoD, 1, "bytes HtoD")                   \
  X(BytesDtoH, 2, "bytes DtoH")                   \
  X(CpuPageFault, 3, "CPU page fault")            \
  X(GpuPageFault, 4, "GPU page fault group")      \
  X(Thrashing, 5, "thrashing")                    \
  X(Throttling, 6, "throttling")                  \
  X(RemoteMap, 7, "remote map")                   \
  X(BytesDtoD, 8, "bytes DtoD")

// Why a migration happened (um_events.cause of bytes rows), CUPTI's numbers.
#define APPTRACER_UM_MIGRATION_CAUSES(X)   \
  X(Unknown, 0, "unknown")                 \
  X(User, 1, "user")                       \
  X(Coherence, 2, "coherence")             \
  X(Prefetch, 3, "prefetch")               \
  X(Eviction, 4, "eviction")               \
  X(AccessCounters, 5, "access counters")

// What a GPU page-fault group was (um_events.cause), CUPTI's numbers.
#define APPTRACER_UM_ACCESS_TYPES(X) \
  X(Unknown, 0, "unknown")           \
  X(Read, 1, "read")                 \
  X(Write, 2, "write")               \
  X(Atomic, 3, "atomic")             \
  X(Prefetch, 4, "prefetch")

// Why memory was mapped remotely instead of migrated, CUPTI's numbers.
#define APPTRACER_UM_REMOTE_MAP_CAUSES(X) \
  X(Unknown, 0, "unknown")                \
  X(Coherence, 1, "coherence")            \
  X(Thrashing, 2, "thrashing")            \
  X(Policy, 3, "policy")                  \
  X(OutOfMemory, 4, "out of memory")      \
  X(Eviction, 5, "eviction")

// `mem_advice` rows: cudaMemoryAdvise values (same numbers), then stream
// attachments of managed memory (cudaMemAttach* flags + 10).
#define APPTRACER_MEM_ADVICES(X)                                    \
  X(SetReadMostly, 1, "set read mostly")                            \
  X(UnsetReadMostly, 2, "unset read mostly")                        \
  X(SetPreferredLocation, 3, "set preferred location")              \
  X(UnsetPreferredLocation, 4, "unset preferred location")          \
  X(SetAccessedBy, 5, "set accessed by")                            \
  X(UnsetAccessedBy, 6, "unset accessed by")                        \
  X(AttachGlobal, 11, "attach global")                              \
  X(AttachHost, 12, "attach host")                                  \
  X(AttachSingle, 14, "attach single")

// Where a hint points: cudaMemLocationType values (same numbers). The
// legacy device-ordinal form maps to device, or host for cudaCpuDeviceId.
#define APPTRACER_MEM_LOCATION_TYPES(X)          \
  X(Invalid, 0, "invalid")                       \
  X(Device, 1, "device")                         \
  X(Host, 2, "host")                             \
  X(HostNuma, 3, "host NUMA node")               \
  X(HostNumaCurrent, 4, "host NUMA node of the calling thread")

// The framework allocator a `sub_allocations` row came from.
#define APPTRACER_SUB_ALLOCATORS(X)                 \
  X(PytorchCaching, 1, "pytorch caching allocator") \
  X(CupyPool, 2, "cupy memory pool")

// Why an `--exact` launch's accesses may be a subset of what it touched
// (exact_launches.incomplete); none when they are all there.
#define APPTRACER_EXACT_GAPS(X)                     \
  X(None, 0, "none")                                \
  X(TensorCopies, 1, "TMA tensor copies")           \
  X(NotInstrumented, 2, "code not instrumented")    \
  X(NotReadBack, 3, "not read back")
// How much of what an `--exact` launch did through one pointer (or in all)
// the Compute Sanitizer saw (exact_coverage): everything, part of it (the
// launch also copies through tensor maps, which it cannot see), or nothing
// (no access recorded: silence proves nothing).
#define APPTRACER_EXACT_COVERAGES(X) \
  X(Exact, 0, "exact")               \
  X(Partial, 1, "partial")           \
  X(None, 2, "none")
// What a CUDA graph node does: CUgraphNodeType's numbers (unknown: the
// driver did not say).
#define APPTRACER_GRAPH_NODE_TYPES(X)                    \
  X(Kernel, 0, "kernel")                                 \
  X(Memcpy, 1, "memcpy")                                 \
  X(Memset, 2, "memset")                                 \
  X(Host, 3, "host")                                     \
  X(ChildGraph, 4, "child graph")                        \
  X(Empty, 5, "empty")                                   \
  X(WaitEvent, 6, "wait event")                          \
  X(EventRecord, 7, "event record")                      \
  X(SemaphoresSignal, 8, "external semaphores signal")   \
  X(SemaphoresWait, 9, "external semaphores wait")       \
  X(MemAlloc, 10, "memory allocation")                   \
  X(MemFree, 11, "memory free")                          \
  X(BatchMemOp, 12, "batch memory operation")            \
  X(Conditional, 13, "conditional")                      \
  X(Unknown, 255, "unknown")

// `nvtx_ranges` rows: a push/pop range (nests per thread and domain), a
// start/end range (may end on another thread) or a mark (an instant).
#define APPTRACER_NVTX_KINDS(X) \
  X(PushPop, 1, "push/pop")     \
  X(StartEnd, 2, "start/end")   \
  X(Mark, 3, "mark")

// `framework_ranges` rows: what a framework was running on a thread. Module:
// an nn.Module's forward (its dotted path, the root by class name). Op: an
// aten op, or another function torch records (forward, or an op the autograd
// engine runs in backward). Backward: an autograd node's backward. Scope: a
// range torch code names itself (torch.profiler.record_function, such as
// "Optimizer.step#SGD.step").
#define APPTRACER_FRAMEWORK_RANGE_KINDS(X) \
  X(Module, 1, "module")                   \
  X(Op, 2, "op")                           \
  X(Backward, 3, "backward")               \
  X(Scope, 4, "scope")

// Where the tracer spends its own time (`tracer_time` rows): sites timed
// inside other sites (kernel arguments inside a CUDA callback, a record
// queued inside any of the first six) are parts of them, not additions. The
// first six run on the program's threads; activity buffers on CUPTI's; the
// writer's sites (its rows' inserts land in the site whose record filled a
// batch) on the tracer's writer thread.
#define APPTRACER_TRACER_SITES(X)                                                 \
  X(ApiCallback, 1, "api_callback")             /* a traced CUDA call's enter and exit callbacks */ \
  X(KernelArguments, 2, "kernel_arguments")     /* a launch's parameter words checked for pointers */ \
  X(RecordAppend, 3, "record_append")           /* a record queued for the writer */ \
  X(HostAllocate, 4, "host_allocate")           /* an interposed malloc family call's bookkeeping */ \
  X(HostFree, 5, "host_free")                   /* an interposed free's bookkeeping */ \
  X(FrameworkAllocator, 6, "framework_allocator") /* a framework allocator's block event */ \
  X(FrameworkRange, 7, "framework_range")       /* a module's or op's push or pop (PyTorch) */ \
  X(ActivityBuffer, 8, "activity_buffer")       /* a CUPTI activity buffer converted (CUPTI's thread) */ \
  X(WriterDrain, 9, "writer_drain")             /* the writer thread: record buffers drained */ \
  X(WriterApiCalls, 10, "writer_api_calls")     /* API call records made rows */ \
  X(WriterAllocations, 11, "writer_allocations") /* allocation and free records */ \
  X(WriterLaunches, 12, "writer_launches")      /* kernel launch records */ \
  X(WriterArguments, 13, "writer_arguments")    /* launch argument records, words resolved */ \
  X(WriterArgumentSets, 14, "writer_argument_sets") /* of which sets found or stored */ \
  X(WriterKernelActivity, 15, "writer_kernel_activity") /* kernel activity records */ \
  X(WriterCopies, 16, "writer_copies")          /* copy and memset records, with their activity */ \
  X(WriterTensorBlocks, 17, "writer_tensor_blocks") /* framework allocators' block records */ \
  X(WriterOther, 18, "writer_other")            /* every other record kind */ \
  X(WriterPassEnd, 19, "writer_pass_end")       /* rows held for activity stored, batches flushed */ \
  X(WriterCommit, 20, "writer_commit")          /* a pass's transaction committed */

// Which library a communicator or collective belongs to.
#define APPTRACER_COMM_LIBRARIES(X) \
  X(Nccl, 1, "NCCL")                \
  X(Mpi, 2, "MPI")

// What a `collectives` row did: collectives (every rank of the communicator
// calls them) and point-to-point operations (one sender, one receiver).
#define APPTRACER_COLLECTIVE_KINDS(X)          \
  X(AllReduce, 1, "AllReduce")                 \
  X(Broadcast, 2, "Broadcast")                 \
  X(Reduce, 3, "Reduce")                       \
  X(AllGather, 4, "AllGather")                 \
  X(ReduceScatter, 5, "ReduceScatter")         \
  X(AllToAll, 6, "AllToAll")                   \
  X(Gather, 7, "Gather")                       \
  X(Scatter, 8, "Scatter")                     \
  X(Barrier, 9, "Barrier")                     \
  X(Scan, 10, "Scan")                          \
  X(Exscan, 11, "Exscan")                      \
  X(Send, 20, "Send")                          \
  X(Recv, 21, "Recv")

// Element types of collectives: NCCL's ncclDataType_t names, MPI's basic
// types mapped onto them; Other: an MPI type with no such match (derived).
#define APPTRACER_DATA_TYPES(X)    \
  X(Unknown, 0, "unknown")         \
  X(Int8, 1, "int8")               \
  X(Uint8, 2, "uint8")             \
  X(Int32, 3, "int32")             \
  X(Uint32, 4, "uint32")           \
  X(Int64, 5, "int64")             \
  X(Uint64, 6, "uint64")           \
  X(Float16, 7, "float16")         \
  X(Float32, 8, "float32")         \
  X(Float64, 9, "float64")         \
  X(Bfloat16, 10, "bfloat16")      \
  X(Float8e4m3, 11, "float8e4m3")  \
  X(Float8e5m2, 12, "float8e5m2")  \
  X(Int16, 13, "int16")            \
  X(Other, 14, "other")

// Reduction operators (NCCL's ncclRedOp_t and MPI's predefined ones).
#define APPTRACER_REDUCE_OPS(X) \
  X(Sum, 1, "sum")              \
  X(Prod, 2, "prod")            \
  X(Max, 3, "max")              \
  X(Min, 4, "min")              \
  X(Avg, 5, "avg")              \
  X(PreMulSum, 6, "premul sum") \
  X(Other, 7, "other")

// The algorithm and protocol NCCL chose for a collective (its profiler's names).
#define APPTRACER_COLL_ALGORITHMS(X)     \
  X(Other, 0, "other")                   \
  X(Tree, 1, "TREE")                     \
  X(Ring, 2, "RING")                     \
  X(CollnetDirect, 3, "COLLNET_DIRECT")  \
  X(CollnetChain, 4, "COLLNET_CHAIN")    \
  X(Nvls, 5, "NVLS")                     \
  X(NvlsTree, 6, "NVLS_TREE")            \
  X(Pat, 7, "PAT")

#define APPTRACER_COLL_PROTOCOLS(X) \
  X(Other, 0, "other")              \
  X(Ll, 1, "LL")                    \
  X(Ll128, 2, "LL128")              \
  X(Simple, 3, "SIMPLE")

// Every enum stored in the trace: C++ type, name in `enum_values`, value list.
// Adding an enum here gives it its C++ type, to_string, EnumInfo and rows.
#define APPTRACER_ENUMS(X)                                                \
  X(ApiDomain, api_domain, APPTRACER_API_DOMAINS)                         \
  X(AllocKind, alloc_kind, APPTRACER_ALLOC_KINDS)                         \
  X(MemoryKind, memory_kind, APPTRACER_MEMORY_KINDS)                      \
  X(CopyKind, copy_kind, APPTRACER_COPY_KINDS)                            \
  X(SyncKind, sync_kind, APPTRACER_SYNC_KINDS)                            \
  X(StreamEventKind, stream_event_kind, APPTRACER_STREAM_EVENT_KINDS)     \
  X(StreamKind, stream_kind, APPTRACER_STREAM_KINDS)                      \
  X(LaunchKind, launch_kind, APPTRACER_LAUNCH_KINDS)                      \
  X(AccessKind, access_kind, APPTRACER_ACCESS_KINDS)                      \
  X(AccessSource, access_source, APPTRACER_ACCESS_SOURCES)                \
  X(UmCounterKind, um_counter_kind, APPTRACER_UM_COUNTER_KINDS)           \
  X(UmMigrationCause, um_migration_cause, APPTRACER_UM_MIGRATION_CAUSES)  \
  X(UmAccessType, um_access_type, APPTRACER_UM_ACCESS_TYPES)              \
  X(UmRemoteMapCause, um_remote_map_cause, APPTRACER_UM_REMOTE_MAP_CAUSES) \
  X(MemAdvice, mem_advice, APPTRACER_MEM_ADVICES)                         \
  X(MemLocationType, mem_location_type, APPTRACER_MEM_LOCATION_TYPES)     \
  X(SubAllocator, sub_allocator, APPTRACER_SUB_ALLOCATORS)                \
  X(ExactGap, exact_gap, APPTRACER_EXACT_GAPS)                            \
  X(ExactCoverage, exact_coverage, APPTRACER_EXACT_COVERAGES)             \
  X(GraphNodeType, graph_node_type, APPTRACER_GRAPH_NODE_TYPES)           \
  X(NvtxKind, nvtx_kind, APPTRACER_NVTX_KINDS)                            \
  X(FrameworkRangeKind, framework_range_kind, APPTRACER_FRAMEWORK_RANGE_KINDS) \
  X(CommLibrary, comm_library, APPTRACER_COMM_LIBRARIES)                  \
  X(CollectiveKind, collective_kind, APPTRACER_COLLECTIVE_KINDS)          \
  X(DataType, data_type, APPTRACER_DATA_TYPES)                            \
  X(ReduceOp, reduce_op, APPTRACER_REDUCE_OPS)                            \
  X(CollAlgorithm, coll_algorithm, APPTRACER_COLL_ALGORITHMS)             \
  X(CollProtocol, coll_protocol, APPTRACER_COLL_PROTOCOLS)                 \
  X(TracerSite, tracer_site, APPTRACER_TRACER_SITES)

// The name an enum has in `enum_values` (and in tables.def's column docs).
template <typename E>
struct EnumInfo;

#define APPTRACER_ENUM_MEMBER(name, value, text) name = value,
#define APPTRACER_DECLARE_ENUM(Type, sql_name, LIST)    \
  enum class Type : uint8_t { LIST(APPTRACER_ENUM_MEMBER) }; \
  template <>                                           \
  struct EnumInfo<Type> {                               \
    static constexpr const char* name = #sql_name;      \
  };                                                    \
  std::string_view to_string(Type v);
APPTRACER_ENUMS(APPTRACER_DECLARE_ENUM)
#undef APPTRACER_DECLARE_ENUM
#undef APPTRACER_ENUM_MEMBER

// One row of `enum_values`.
struct EnumValue {
  const char* enum_name;
  int value;
  const char* name;
};
// Every value of every enum, in declaration order.
const std::vector<EnumValue>& all_enum_values();

// The memory kind of an allocation, as a copy endpoint sees it.
MemoryKind memory_kind_of(AllocKind kind);

// Whether memory of this kind lives on a GPU (for copy direction).
bool is_device_memory(MemoryKind kind);

// Bytes per element of a data type; 0 for Unknown and Other (their size is
// recorded with them).
int data_type_bytes(DataType type);

// Point-to-point operations: one sender and one receiver, matched by order.
bool is_point_to_point(CollectiveKind kind);

}  // namespace apptracer
