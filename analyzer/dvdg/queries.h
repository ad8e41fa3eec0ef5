// Questions people ask of a graph: where did this value come from (--why),
// who used it (--consumers), and what happened to a tensor or buffer over its
// life (--lifetime).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "analyzer/dvdg/graph.h"

namespace apptracer::dvdg {

// "0x7f..." as an address; nothing for any other text.
std::optional<int64_t> parse_address(const std::string& text);

// The location an address falls in: the finest (a sub-allocation before the
// allocation holding it), the most recently allocated when freed memory was
// reused.
std::optional<uint32_t> location_containing(const Graph& graph, int64_t address);

// What a query names: "v12" or "12" (a value), "s7" (sub-allocation 7, a
// tensor), "0x7f..." (the memory at that address). Throws std::runtime_error
// with one line when nothing matches.
struct QueryTarget {
  uint32_t location = 0;
  std::optional<uint32_t> value;    // named as a value
  std::optional<int64_t> address;  // named by address
};
QueryTarget resolve_target(const Graph& graph, const std::string& text);

// The value a query means: the named value, or the latest value holding the
// address (or, for a sub-allocation, its latest value).
uint32_t resolve_value(const Graph& graph, const std::string& text);

// The operations that produced `value`, transitively, in program order.
void print_why(const Graph& graph, uint32_t value, std::ostream& out);

// The operations that read `value` and what they wrote.
void print_consumers(const Graph& graph, uint32_t value, std::ostream& out);

// A location's life in program order: allocated, each write (the value it
// made), each read, each migration, freed.
void print_lifetime(const Graph& graph, uint32_t location, std::ostream& out);

}  // namespace apptracer::dvdg
