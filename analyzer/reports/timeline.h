// A trace as a timeline: tracks (processes, host threads, NVTX per thread, GPU
// streams), slices on them, and flows between slices. Built once from the
// database, then written by the Perfetto or the Chrome JSON writer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "apptracer/sqlite.h"
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

// Names of arguments and categories are string literals: a big trace has
// millions of slices, and these repeat in every one.
struct TimelineArg {
  std::string_view name;
  Cell value;
};

struct TimelineSlice {
  size_t track = 0;  // index into Timeline::tracks
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t name = 0;  // index into Timeline::names
  std::string_view category;  // "cuda_api", "kernel", "memcpy", "memset" or "nvtx"
  std::vector<TimelineArg> args;
  std::vector<uint64_t> flows_out;  // flows that start at this slice
  std::vector<uint64_t> flows_in;   // flows that end at this slice
};

struct Timeline {
  std::vector<TimelineTrack> tracks;
  std::vector<TimelineSlice> slices;
  std::vector<std::string> names;  // slice names, each once
  uint64_t flow_count = 0;  // flow ids are 1..flow_count
  uint64_t api_flow_count = 0;   // API call -> the GPU work it issued
  uint64_t dvdg_flow_count = 0;  // producer -> consumer along DVDG edges

  const std::string& name_of(const TimelineSlice& slice) const { return names[slice.name]; }
};

// Reads the whole trace. Flows along DVDG edges are drawn when the trace holds
// the tables `apptracer dvdg` writes, and skipped otherwise.
Timeline build_timeline(Database& db, Progress& progress);

}  // namespace apptracer
