// A trace as a timeline: tracks (processes, host threads, NVTX per thread, GPU
// streams), slices on them, and flows between slices. Read from the database
// piece by piece and handed to a writer (Perfetto or Chrome JSON) as it is
// read, so a trace of any size is written in bounded memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/trace/trace.h"
#include "progress.h"
#include "table.h"

namespace apptracer {

struct TimelineTrack {
  enum class Kind { Process, Thread, Nvtx, Stream };
  Kind kind = Kind::Process;
  uint64_t uuid = 0;         // unique in the timeline, never 0
  uint64_t parent_uuid = 0;  // the process track; 0 for processes
  std::string name;
  int64_t pid = 0;
  int64_t tid = 0;  // Thread and Nvtx tracks: the OS thread
};

// Names of arguments and categories are string literals.
struct TimelineArg {
  std::string_view name;
  Cell value;
};

struct TimelineSlice {
  size_t track = 0;  // the track's index, in the order tracks were handed out
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // never before start_ns
  std::string name;
  std::string_view category;  // "cuda_api", "kernel", "memcpy", "memset" or "nvtx"
  std::vector<TimelineArg> args;
  std::vector<uint64_t> flows_out;  // flows that start at this slice
  std::vector<uint64_t> flows_in;   // flows that end at this slice
};

// What a timeline writer is handed, in this order: every track before the
// first slice on it; slices by start time, the longer first when two start
// together; then finish().
class TimelineSink {
 public:
  virtual ~TimelineSink() = default;
  virtual void track(const TimelineTrack& track) = 0;
  virtual void slice(const TimelineSlice& slice) = 0;
  virtual void finish() = 0;
};

struct TimelineCounts {
  size_t tracks = 0;
  size_t slices = 0;
  uint64_t flows = 0;
  uint64_t api_flows = 0;   // API call -> the GPU work it issued
  uint64_t dvdg_flows = 0;  // producer -> consumer along DVDG edges
};

// Reads the whole trace into `sink`, slice times since the trace's start.
// Memory: the tracks, a few integers per call and GPU operation, the slices
// of a row per table, and the flows along DVDG edges (drawn when the trace
// holds the tables `apptracer dvdg` writes, skipped otherwise); never the
// slices. So the calls and the GPU work are read twice: first for who issued
// what (a call's slice names the flows to its GPU work, which starts later),
// then streamed in time order as slices.
TimelineCounts stream_timeline(trace::Trace& trace, TimelineSink& sink, Progress& progress);

// The whole timeline in memory, for tests and small traces.
struct Timeline {
  std::vector<TimelineTrack> tracks;
  std::vector<TimelineSlice> slices;  // in the order the sink was handed them
  uint64_t flow_count = 0;  // flow ids are unique, not dense
  uint64_t api_flow_count = 0;
  uint64_t dvdg_flow_count = 0;

  const std::string& name_of(const TimelineSlice& slice) const { return slice.name; }
};

Timeline build_timeline(trace::Trace& trace, Progress& progress);

// Hands a timeline held in memory to a writer, as stream_timeline would.
void replay_timeline(const Timeline& timeline, TimelineSink& sink);

}  // namespace apptracer
