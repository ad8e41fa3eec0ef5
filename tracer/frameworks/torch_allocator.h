// PyTorch's CUDA caching allocator: attaching a trace tracker, so that every
// block it hands out or takes back is recorded (sub_allocations rows).
//
// The tracker is attached through the allocator object's vtable: torch
// exports the allocator (c10::cuda::CUDACachingAllocator::allocator) but not
// the attach function, whose slot and the TraceEntry layout are known per
// torch version (tables in torch_allocator.cpp; unknown versions are
// refused). It must be attached after torch's CUDA initialisation: before,
// torch accepts it and drops it. The Python bootstrap (apptracer-python/
// sitecustomize.py) calls it from torch.cuda._lazy_call.
#pragma once

#include <string>

namespace apptracer::frameworks {

enum class AttachStatus {
  Attached = 0,
  NotRecording = 1,     // the tracer is not recording in this process
  UnknownVersion = 2,   // a torch version whose layout apptracer does not know
  NoAllocator = 3,      // libc10_cuda.so not loaded, or its allocator not created
  UnexpectedLayout = 4, // the vtable slot does not lie in libc10_cuda.so
  AlreadyAttached = 5,
  Failed = 6,           // torch threw
  OtherBackend = 7,     // not the native caching allocator (cudaMallocAsync: CUDA sees each block)
};

// Attaches to the process's torch (version as torch.__version__ says it,
// backend as torch.cuda.memory.get_allocator_backend() does). Logs one info
// line when it does not, and records meta `sub_allocations.pytorch` either way.
AttachStatus attach_torch_tracker(const std::string& torch_version, const std::string& backend);

// The vtable byte offset of CUDAAllocator::attachAllocatorTraceTracker for
// a torch version ("2.11.0+cu130"), or -1 for a version apptracer does not know.
long torch_attach_slot_offset(const std::string& torch_version);

}  // namespace apptracer::frameworks
