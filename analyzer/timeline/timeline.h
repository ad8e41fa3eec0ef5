// A trace as a timeline: tracks (processes, host threads, NVTX per thread, GPU
// streams, counters of memory), slices on them, flows between slices, and
// the counters' values. Read from the database
// piece by piece and handed to a writer (Perfetto or Chrome JSON) as it is
// read, so a trace of any size is written in bounded memory.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "analyzer/trace/trace.h"
#include "analyzer/progress.h"
#include "analyzer/table/table.h"

namespace apptracer {

struct TimelineTrack {
  enum class Kind { Process, Thread, Nvtx, Stream, Counter };
  Kind kind = Kind::Process;
  uint64_t uuid = 0;         // unique in the timeline, never 0
  uint64_t parent_uuid = 0;  // the process track; 0 for processes
  std::string name;
  int64_t process = 0;  // the trace's process it belongs to (processes.process_id)
  int64_t pid = 0;
  int64_t tid = 0;  // Thread and Nvtx tracks: the OS thread
  trace::NullableInt device;  // Stream tracks
  trace::NullableInt stream;  // Stream tracks: the stream's id in the trace
};

// A GPU as the trace's devices table describes it.
struct TimelineDevice {
  int64_t id = 0;  // the CUDA ordinal
  int64_t process = 0;  // the trace's process that used it
  std::string name;
  trace::NullableInt cc_major, cc_minor, total_memory_bytes, sm_count;
};

// The job a trace of one process is a rank of: its largest communicator.
struct TimelineRank {
  std::string backend;  // "nccl" or "mpi"
  int64_t rank = 0;
  int64_t world_size = 0;
};

// Each process's rank (by processes.process_id) in its largest communicator:
// the job's world, or the widest group it was in; none for a process that
// held no rank.
std::map<int64_t, TimelineRank> process_ranks(trace::Trace& trace);

// What the timeline is of, handed to a writer before any track.
struct TimelineSource {
  std::vector<TimelineDevice> devices;
  std::optional<TimelineRank> rank;  // none for a merged trace or one without communicators
};

// A grid or block: three dimensions, each known or not.
using Dim3 = std::array<int64_t, 3>;

// Names of arguments and categories are string literals. The names are the
// PyTorch profiler's (Kineto's), so tools that read its traces read ours.
struct TimelineArg {
  std::string_view name;
  std::variant<std::monostate, int64_t, double, std::string, Dim3> value;
  // Where a text value is a copy of a text the trace stores (or of a
  // literal), that text's address: equal keys, equal values, so a writer
  // finds a value it interned without hashing it again. Null where the value
  // was made.
  const void* value_key = nullptr;
};

// Flow ids: a call -> GPU work flow ("ac2g" in Kineto's terms) has a non-zero
// kind in its low two bits, a flow along a DVDG edge has zero there.
inline bool is_call_flow(uint64_t flow) { return (flow & 3) != 0; }

struct TimelineSlice {
  size_t track = 0;  // the track's index, in the order tracks were handed out
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // never before start_ns
  std::string name;
  // Where the name is a text the trace stores (or a literal), that text's
  // address: equal keys, equal names, so a writer finds a name it interned
  // without hashing a kernel's long name again. Null where the name was made.
  const void* name_key = nullptr;
  // Kineto's: "cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy",
  // "gpu_memset", "user_annotation" (an NVTX range on its thread) or
  // "gpu_user_annotation" (an NVTX range on a stream that ran work issued in it)
  std::string_view category;
  std::vector<TimelineArg> args;
  std::vector<uint64_t> flows_out;  // flows that start at this slice
  std::vector<uint64_t> flows_in;   // flows that end at this slice
};

// A counter track's value in bytes from `ns` on.
struct TimelineCounter {
  size_t track = 0;
  int64_t ns = 0;
  int64_t value = 0;
};

// What a timeline writer is handed, in this order: the source; every track
// before the first slice or value on it; slices by start time, the longer
// first when two start together, and counter values by time, each before
// the slices that start after it; then finish().
class TimelineSink {
 public:
  virtual ~TimelineSink() = default;
  virtual void source(const TimelineSource& source) = 0;
  virtual void track(const TimelineTrack& track) = 0;
  virtual void slice(const TimelineSlice& slice) = 0;
  virtual void counter(const TimelineCounter& counter) = 0;
  virtual void finish() = 0;
};

struct TimelineCounts {
  size_t tracks = 0;
  size_t slices = 0;
  size_t counter_tracks = 0;
  size_t counter_values = 0;
  uint64_t flows = 0;
  uint64_t api_flows = 0;   // API call -> the GPU work it issued
  uint64_t dvdg_flows = 0;  // producer -> consumer along DVDG edges
  // Where the DVDG flows came from.
  enum class Dvdg { None, Stored, Built } dvdg = Dvdg::None;
};

// Where the flows along DVDG edges come from: the tables `apptracer dvdg`
// stored in the trace (none when it stored none), or those tables and else
// the graph built in memory (the trace is not changed).
enum class DvdgFlowSource { Stored, StoredOrBuilt };

// What the timeline holds beyond the trace's own rows.
struct TimelineContent {
  DvdgFlowSource dvdg = DvdgFlowSource::Stored;
  // Besides each GPU's memory in use, a counter track per owner (memory.h's
  // owners: the program, each framework's tensors and cache, NCCL, library
  // workspaces, ...), from the memory model: it builds the data-flow graph,
  // held only while the counters are read.
  bool memory_owners = false;
};

// Reads the whole trace into `sink`, slice times since the trace's start.
// Memory: the tracks, a few integers per call and GPU operation, the
// counters' values (a few per allocation and migration), the slices of a
// row per table, and the flows along DVDG edges (and, while they are found,
// the graph when it is built); never the slices. So the calls and the GPU
// work are read twice: first for who issued what (a call's slice names the
// flows to its GPU work, which starts later; an NVTX range's GPU span is its
// calls' work), then streamed in time order as slices.
TimelineCounts stream_timeline(trace::Trace& trace, TimelineSink& sink, Progress& progress,
                               const TimelineContent& content = {});

// The whole timeline in memory, for tests and small traces.
struct Timeline {
  TimelineSource source;
  std::vector<TimelineTrack> tracks;
  std::vector<TimelineSlice> slices;  // in the order the sink was handed them
  std::vector<TimelineCounter> counters;  // by time
  uint64_t flow_count = 0;  // flow ids are unique, not dense
  uint64_t api_flow_count = 0;
  uint64_t dvdg_flow_count = 0;

  const std::string& name_of(const TimelineSlice& slice) const { return slice.name; }
};

Timeline build_timeline(trace::Trace& trace, Progress& progress, const TimelineContent& content = {});

// Hands a timeline held in memory to a writer, as stream_timeline would.
void replay_timeline(const Timeline& timeline, TimelineSink& sink);

}  // namespace apptracer
