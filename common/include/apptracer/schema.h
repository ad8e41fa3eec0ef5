// The trace database contract shared by tracer and analyzer.
#pragma once

#include <string>

namespace apptracer {

// Bumped whenever a table or column changes meaning. The analyzer refuses a
// trace whose version is newer than the one it was built with.
// 2: memcpys.src/dst_numa_node; um_events and mem_advice columns settled.
// 3: tables declared once (tables.def) and described in schema_tables and
//    schema_columns; kernel arguments stored once per distinct set
//    (kernel_arg_sets, kernel_arg_words; kernel_args is a view).
inline constexpr int kSchemaVersion = 3;
// The oldest version the analyzer still reads.
inline constexpr int kOldestReadableSchemaVersion = 2;

// Values of meta's `status` key.
inline constexpr const char* kStatusRecording = "incomplete";
inline constexpr const char* kStatusComplete = "complete";

// SQL that creates every trace table (tables.def, roles meta and trace), view
// and index, fills `enum_values`, `schema_tables` and `schema_columns`, and
// sets meta.schema_version. Run it inside one transaction on an empty database.
std::string trace_schema_sql();

// The same in two steps, for a writer that loads first and indexes last
// (maintaining indexes row by row is most of the cost of inserting):
// tables, enum values and version, then the indexes.
std::string trace_tables_sql();
std::string trace_indexes_sql();

}  // namespace apptracer
