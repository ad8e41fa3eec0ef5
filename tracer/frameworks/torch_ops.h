// PyTorch's ops as framework ranges: RecordFunction callbacks, registered in
// libtorch_cpu.so through at::addGlobalCallback, push a range when an aten
// op (or an autograd node's backward, or a named scope) starts on a thread
// and pop it when it ends. Only the exported functions are called; the one
// private field read (the autograd sequence number) is at an offset known
// per torch version (torch_ops.cpp); unknown versions are refused. With the
// sink's op_sample_every N > 1, every op and node is recorded until
// op_sample_after of them were, then torch runs the op and backward callbacks
// for 1 in N calls (its own sampling); meta framework_ranges.op_sample_every
// says N, and framework_ranges.ops how many were recorded whole first.
#pragma once

#include <string>

namespace apptracer::frameworks {

enum class OpsAttachStatus {
  Attached = 0,
  NotRecording = 1,    // the tracer is not recording in this process
  UnknownVersion = 2,  // a torch version whose layout apptracer does not know
  NoTorch = 3,         // libtorch_cpu.so not loaded, or without the functions
  AlreadyAttached = 5,
  Failed = 6,          // torch threw
};

// Registers the callbacks with the process's torch (version as
// torch.__version__ says it). Logs one info line when it does not, and
// records meta `framework_ranges.ops` either way.
OpsAttachStatus attach_torch_ops(const std::string& torch_version);

// The byte offset of RecordFunction::sequence_nr_ for a torch version, or -1
// for a version apptracer does not know.
long torch_sequence_nr_offset(const std::string& torch_version);

}  // namespace apptracer::frameworks
