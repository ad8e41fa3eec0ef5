// Questions people ask of a graph: where did this value come from (--why),
// and who used it (--consumers).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "graph.h"

namespace apptracer::dvdg {

// "0x7f..." as an address; nothing for any other text.
std::optional<int64_t> parse_address(const std::string& text);

// The location an address falls in; the most recently allocated one when
// freed memory was reused.
std::optional<uint32_t> location_containing(const Graph& graph, int64_t address);

// "v12" or "12": that value. "0x7f..." (or a decimal address with --why
// ADDR): the latest value of the location containing it. Throws
// std::runtime_error with one line when nothing matches.
uint32_t resolve_value(const Graph& graph, const std::string& text);

// The operations that produced `value`, transitively, in program order.
void print_why(const Graph& graph, uint32_t value, std::ostream& out);

// The operations that read `value` and what they wrote.
void print_consumers(const Graph& graph, uint32_t value, std::ostream& out);

}  // namespace apptracer::dvdg
