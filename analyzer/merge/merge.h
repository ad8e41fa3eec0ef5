// `apptracer merge`: one database from the traces of several processes (the
// forked children of a program, the ranks of a job).
//
// The result has the ordinary trace schema, so every analyzer command reads
// it, plus:
//   processes(process_id, pid, ppid, host, command_line, status, source):
//       one row per input trace, process_id 1, 2, ... in input order;
//   process_meta(process_id, key, value): each input's whole meta table;
//   a process_id column in every per-process table (threads, api_calls,
//       allocations, memcpys, memsets, kernels, kernel_args, syncs,
//       stream_events, um_events, mem_advice, nvtx_ranges);
//   merge_offsets(process_id, id_space, offset): how ids were shifted, and
//       (id_space time_ns) how times were: the clock offset the tracer
//       measured for the process (meta clock_offset_ns, MPI jobs), else 0;
//   merge_devices(process_id, ordinal, device): each process's device ordinals.
//
// Ids stay unique and joins stay valid: row ids and correlation ids of a
// later process are shifted past the earlier ones (original = merged - offset);
// thread ids and stream ids keep their values unless they collide with an
// earlier process's, in which case that process's are shifted the same way;
// strings are shared (each text once); devices are shared by UUID, so two
// processes on one GPU count against one device. DVDG tables are per process
// and are not merged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/progress.h"

namespace apptracer {

struct MergeSummary {
  int64_t processes = 0;
  int64_t rows = 0;  // rows copied from the inputs' tables
};

// Writes the merged trace to `output`, which must not exist unless `overwrite`.
// Inputs are opened read-only. Throws std::runtime_error (TraceError for a bad
// input) with a one-line message.
MergeSummary merge_traces(const std::vector<std::string>& inputs, const std::string& output,
                          bool overwrite, Progress& progress);

}  // namespace apptracer
