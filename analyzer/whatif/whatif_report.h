// A what-if result for people (tables) and programs (JSON).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "analyzer/table/table.h"

#include "analyzer/whatif/whatif.h"

namespace apptracer::whatif {

// Totals and phases, transfers by path, the critical path's make-up and its
// longest `steps` steps, then notes.
void write_whatif_text(std::ostream& out, const WhatifResult& result, size_t steps = 10);

// The tables of write_whatif_text (for CSV): time, transfers,
// critical_path and longest_steps.
std::vector<Table> whatif_tables(const WhatifResult& result, size_t steps = 10);

// The whole result; critical path steps beyond `max_steps` are left out
// (and counted).
std::string whatif_json(const WhatifResult& result, size_t max_steps = 10000);

}  // namespace apptracer::whatif
