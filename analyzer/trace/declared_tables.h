// Whether a trace holds what its schema version declares, for a command
// that reads many tables through the model (trace.h), where a table the
// trace lacks reads as empty: a trace of this version lacking a table its
// tracer always creates is damaged, and one older than this apptracer reads
// that lacks a table or a column that always holds a value cannot be read
// (reading_trace, trace_file.h, says to record it again).
#pragma once

#include "apptracer/sqlite.h"

namespace apptracer::trace {

// Throws DamagedTrace or SqliteError saying the first thing lacking.
void require_declared_tables(Database& db);

}  // namespace apptracer::trace
