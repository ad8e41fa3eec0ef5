// Who owns a piece of memory: the program, a framework's caching allocator
// (its tensor blocks, and the free space it keeps cached in its segments), a
// communication library (NCCL, MPI), another library's workspace (cuBLAS,
// cuDNN), or pinned and mapped host memory. Recognized from where and when
// it was made; the memory view (memory_model.h) and the diagnoses
// (analyzer/diagnose) both ask here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/trace/intervals.h"
#include "analyzer/trace/trace.h"
#include "apptracer/enums.h"

namespace apptracer::memory {

enum class Owner : uint8_t {
  Program,           // the program's own allocations (cudaMalloc, pools, VMM, arrays)
  Xla,               // a JAX process's device memory: XLA's pool, or each buffer (per-buffer mode)
  Managed,           // the program's managed memory
  FrameworkTensors,  // blocks a framework's allocator handed out and the program holds
  FrameworkCache,    // free space the allocator keeps in its segments
  GraphPool,         // blocks of a CUDA graph's private pool (PyTorch)
  Communication,     // made inside an NCCL or MPI call
  Library,           // a library's workspace: outside the framework's allocator where one holds the data
  CublasWorkspace,   // cuBLAS's (and cuBLASLt's), however allocated (library_workspaces.h)
  CudnnWorkspace,    // cuDNN's, however allocated
  PinnedHost,        // page-locked host memory (write-combined included)
  MappedHost,        // host memory mapped into the GPU's address space
};

// "program", "xla", "managed", "pytorch tensors", "pytorch cache", "pytorch CUDA
// graph pool", "nccl/mpi", "library workspace", "cuBLAS workspace", "cuDNN
// workspace", "pinned host", "mapped host"; framework owners name their
// allocator.
std::string owner_name(Owner owner, std::optional<SubAllocator> allocator = std::nullopt);

// A library's own memory (NCCL/MPI, workspaces): its kernels reach it
// through pointers kept in device structures or handles, and the program
// can neither remove it nor free it earlier.
bool is_library_memory(Owner owner);

// The NCCL and MPI calls of each thread (collectives, the init and split
// calls that made communicators, and the ends of NCCL groups, where NCCL sets
// up a group's connections), and the threads NCCL starts inside a call, for
// as long as that call runs: a library allocating inside one of its calls
// allocates for itself.
class CommunicationCalls {
 public:
  CommunicationCalls() = default;
  explicit CommunicationCalls(trace::Trace& trace);
  // Whether a call on `tid` from `start_ns` to `end_ns` ran inside one.
  bool contains(int64_t tid, int64_t start_ns, int64_t end_ns) const;

 private:
  void adopt_helper_threads(trace::Trace& trace);

  std::unordered_map<int64_t, trace::Intervals> calls_;  // by start
};

// Where framework allocators' blocks lay: an allocation holds an
// allocator's blocks (it is one of its segments) when any block's bytes
// overlap it (an expandable segment's block may span several mappings).
class FrameworkSegments {
 public:
  FrameworkSegments() = default;
  explicit FrameworkSegments(trace::Trace& trace);
  // Processes whose data a framework's allocator holds (it reported blocks).
  bool framework_process(trace::ProcessId process) const;
  // The allocator whose blocks lie in [address, address + bytes) of
  // `process`; none when no block does.
  std::optional<SubAllocator> holder(trace::ProcessId process, int64_t address, int64_t bytes) const;

 private:
  // Merged address ranges of each process's blocks, by allocator.
  std::map<std::pair<trace::ProcessId, SubAllocator>, std::vector<std::pair<int64_t, int64_t>>> spans_;
};

// Where a framework's compiler ran on each thread (XLA's NVTX compile and
// pass ranges): what it allocates there is its own (autotuning scratch,
// the buffers it times candidate kernels on), not the program's data.
class CompilerRanges {
 public:
  CompilerRanges() = default;
  explicit CompilerRanges(trace::Trace& trace);
  // Whether a call on `tid` from `start_ns` to `end_ns` ran inside one.
  bool contains(int64_t tid, int64_t start_ns, int64_t end_ns) const;
  // Whether XLA compiled in the process: a JAX process, whose device memory
  // XLA's allocator makes.
  bool compiled_in(trace::ProcessId process) const { return processes_.count(process) > 0; }

 private:
  std::unordered_map<int64_t, trace::Intervals> ranges_;  // merged, by start
  std::set<trace::ProcessId> processes_;
};

// Which library, if any, made an allocation for itself: made inside an NCCL
// or MPI call (Communication), or, while a framework's compiler ran or where
// a framework's allocator holds the process's data, device memory, a vmm
// mapping or mapped host memory outside its blocks (Library: NCCL's buffers
// and flags, a cuBLAS handle's workspace, XLA's autotuning buffers). Its
// kernels reach such memory through pointers kept in device structures,
// which no launch argument shows, and the program cannot remove it. None:
// the program's (or its framework's).
std::optional<Owner> library_owner(AllocKind kind, bool made_in_communication_call, bool made_while_compiling,
                                   bool framework_process, bool holds_framework_blocks);

}  // namespace apptracer::memory
