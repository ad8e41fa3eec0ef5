// Human-readable names for values and operations, shared by every exporter
// and query so a value reads the same everywhere.
#pragma once

#include <cstdint>
#include <string>

#include "analyzer/dvdg/graph.h"

namespace apptracer::dvdg {

std::string hex_address(int64_t address);
// "512 B", "4 KiB", "1.5 MiB".
std::string format_bytes(int64_t bytes);

// "host" or "device 0": where managed memory resides.
std::string residency_name(int64_t residency);

// What the operation was: "HtoD copy", "memset", "allocation", "free",
// "migration host -> device 0", "prefetch device 0 -> host", "host phase",
// or the kernel's name.
std::string op_name(const Graph& graph, uint32_t op);

// A migration edge's label after its op's name: "64 MiB, user".
std::string migration_detail(const Graph& graph, const Edge& edge);

// Where the value lives: "alloc #3 device (device 0)", "alloc #1 pinned host",
// "sub-allocation #7 (pytorch caching allocator) of alloc #3 device (device 0)"
// or "unknown host region" (host memory in no allocation the tracer saw).
std::string location_name(const Graph& graph, uint32_t location);

// "v7" — the value's id as the command line accepts it.
std::string value_ref(uint32_t value);

// "a12" — the access set of op 12 (graph.h), as exports name its node.
std::string access_set_ref(uint32_t op);
// An edge's end as exports name it: a value, or (kAccessSet) its op's access set.
std::string end_ref(uint32_t value, uint32_t op);
// "a12: access set of op 12, 40 possible reads, 40 writes", the parts
// joined by `line_break`.
std::string access_set_label(const Graph& graph, uint32_t op, const char* line_break);

// Location, the value's address and size (and which bytes of the location,
// when not all of them), version (and, for managed memory, where it
// resides): one line each (Fig. 6.1 boxes).
std::string value_label(const Graph& graph, uint32_t value, const char* line_break);

}  // namespace apptracer::dvdg
