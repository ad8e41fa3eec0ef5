// cuBLAS's and cuDNN's workspaces: memory a library keeps for its kernels'
// scratch, which the program cannot remove or free earlier. A library
// allocates it itself (outside a framework's allocator: memory_owners.h) or
// through the framework's allocator, as a tensor block: PyTorch keeps one
// cuBLAS (and cuBLASLt) workspace per handle and stream for the whole run,
// and hands cuDNN a workspace for each convolution call.
//
// The trace records no cuBLAS or cuDNN call, so a workspace is recognized
// from what it does record:
// - where it was made: the framework op running on the allocating thread
//   (aten::mm, aten::cudnn_convolution: framework context), else the next
//   kernel its process issued (a library allocates inside the call that
//   then launches its kernel);
// - what used it: nothing, or only that library's kernels (a workspace is
//   reached through launch arguments or pointers kept in the handle, never
//   by copies or the program's kernels);
// - how long it lived: to the end of the run (a per-handle workspace), or
//   not past the call that made it (a per-call workspace). Where the trace
//   has no framework context the call's end is unknown: a block every
//   kernel issued while it lived was that library's is taken for one.
// An operation's output is read after the op, by other work (else dropped
// at once): none of these hold for it. What is misread: without framework
// context, two library calls in a row with an intermediate only they
// touch read as one call's workspace, and so does an output only the
// library's kernels touch kept to the end (a benchmark's GEMM output never
// read back). In a process without a framework allocator an unused
// allocation stays the program's: cuBLAS's own cudaMalloc and the
// program's are the same call on the same thread.
#pragma once

#include <optional>
#include <string_view>

#include "analyzer/memory/memory_owners.h"

namespace apptracer::memory {

// CublasWorkspace for a cuBLAS or cuBLASLt kernel ("sm90_xmma_gemm_...",
// "nvjet_...", "gemv2T_kernel_val", "splitKreduce_kernel"), CudnnWorkspace
// for a cuDNN one ("cudnn::...", "sm80_xmma_fprop_implicit_gemm_...",
// "implicit_convolve_sgemm"), by its demangled name; none for any other.
std::optional<Owner> kernel_library(std::string_view kernel_name);

// The library a framework op calls: cuBLAS for PyTorch's matrix products
// (aten::mm, aten::addmm, aten::bmm, ...), cuDNN for its convolutions and
// the ops named for cuDNN; none for any other.
std::optional<Owner> op_library(std::string_view op_name);

}  // namespace apptracer::memory
