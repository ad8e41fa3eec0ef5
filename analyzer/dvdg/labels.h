// Human-readable names for values and operations, shared by every exporter
// and query so a value reads the same everywhere.
#pragma once

#include <cstdint>
#include <string>

#include "graph.h"

namespace apptracer::dvdg {

std::string hex_address(int64_t address);
// "512 B", "4 KiB", "1.5 MiB".
std::string format_bytes(int64_t bytes);

// What the operation was: "HtoD copy", "memset", "allocation", "free", or
// the kernel's name.
std::string op_name(const Graph& graph, uint32_t op);

// Where the value lives: "alloc #3 device (device 0)", "alloc #1 pinned host" or
// "region of pageable memory" (memory in no known allocation).
std::string location_name(const Graph& graph, uint32_t location);

// "v7" — the value's id as the command line accepts it.
std::string value_ref(uint32_t value);

// Location, address and size, version: one line each (Fig. 6.1 boxes).
std::string value_label(const Graph& graph, uint32_t value, const char* line_break);

}  // namespace apptracer::dvdg
