// `whatif --store`: the result as tables of the trace (tables.def:
// whatif_runs, whatif_phases, whatif_transfers, whatif_critical_path), so a
// report, a diagnosis or any SQL client reads it beside the trace. As with
// the DVDG's tables: only when asked, in one transaction, touching nothing
// else; storing the same system and changes again replaces that run.
#pragma once

#include <cstdint>

#include "apptracer/sqlite.h"
#include "analyzer/whatif/whatif.h"

namespace apptracer::whatif {

// Returns the run's id.
int64_t store_whatif(Database& db, const WhatifResult& result);

}  // namespace apptracer::whatif
