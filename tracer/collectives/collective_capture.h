// The collectives stage (NCCL's profiler plugin, the interposed NCCL and MPI
// APIs): where its records go and the few facts about the live process it
// asks for. The injected library fills it in (inject/lifecycle.cpp); the CPU
// tests fill it with fakes. Until it is set, every entry point only forwards
// to the real library.
#pragma once

#include <cstdint>
#include <string>

#include "apptracer/records.h"
#include "buffer/record_buffers.h"
#include "buffer/string_table.h"
#include "collectives/communicators.h"

namespace apptracer {

struct CollectiveCapture {
  RecordBuffers& buffers;
  StringTable& strings;
  uint64_t (*now_ns)();
  // CUPTI's id of a stream the program passed (nullptr: the legacy default
  // stream of the current context); -1 when unknown.
  int64_t (*stream_id)(const void* stream);
  // The calling thread's current CUDA device, -1 when none.
  int32_t (*current_device)();
  // A fact for the trace's meta table (not on the hot path).
  void (*set_meta)(const std::string& key, const std::string& value);
};

// Starts recording into `capture` (nullptr stops it).
void set_collective_capture(CollectiveCapture* capture);
// nullptr while not recording.
CollectiveCapture* collective_capture();

// Process-wide, in call order; never 0.
uint64_t next_collective_op_id();

// A record of the collectives stage: type set, correlation ids 0.
Record collective_record(RecordType type);
void emit(CollectiveCapture& capture, Record& record);

// Announces a communicator (or its end); the writer merges what several
// sources (plugin, interposer) say about one.
struct CommunicatorFacts {
  uint64_t handle = 0;
  uint64_t parent_comm_id = 0;
  int32_t n_nodes = -1;
  int32_t world_rank = -1;
  int32_t device = -1;
  uint32_t name_id = 0;
  uint64_t call_start_ns = 0;  // the call that made it, which returns now: when it was entered
};
void emit_communicator(CollectiveCapture& capture, const CommState& comm,
                       const CommunicatorFacts& facts);
void emit_communicator_end(CollectiveCapture& capture, const CommState& comm, uint64_t handle);

// The operation's record with its communicator's fields filled.
Record operation_record(const CommState& comm, CollectiveKind kind, uint64_t op_id);

// In a forked child.
void collectives_after_fork();

}  // namespace apptracer
