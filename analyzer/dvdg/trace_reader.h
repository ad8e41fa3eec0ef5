// Reads what the DVDG needs from a trace: memory locations, the operations in
// trace order with the memory each one touches, and the stream events and
// synchronizations that order them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "apptracer/sqlite.h"
#include "graph.h"

namespace apptracer::dvdg {

// One location an operation touches.
struct Access {
  uint32_t location = 0;
  bool reads = false;
  bool writes = false;
  // The read is certain (copy source, const parameter), not assumed; only a
  // certain read of memory holding no data is reported as uninitialized.
  bool known_read = false;
  // The write covers the whole location, so nothing of the previous version survives.
  bool whole = false;
  int64_t bytes = -1;  // -1 when unknown
};

struct StreamEvent {
  StreamEventKind kind = StreamEventKind::Record;
  int64_t handle = 0;
  std::optional<int64_t> stream;
  std::optional<int64_t> device;
  int64_t ns = 0;
};

struct SyncPoint {
  SyncKind kind = SyncKind::Device;
  std::optional<int64_t> device;
  std::optional<int64_t> stream;
  std::optional<int64_t> event_handle;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct TraceOps {
  std::vector<Location> locations;
  std::vector<Op> ops;  // not yet in program order
  // access_begin[i] .. access_begin[i + 1] index `accesses`: what op i touches.
  std::vector<uint32_t> access_begin;
  std::vector<Access> accesses;
  std::vector<StreamEvent> stream_events;
  std::vector<SyncPoint> syncs;
  std::unordered_map<int64_t, std::string> names;
};

TraceOps read_trace_ops(Database& db);

}  // namespace apptracer::dvdg
