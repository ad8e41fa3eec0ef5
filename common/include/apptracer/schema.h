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
// 4: a runtime call's first driver call folded into its api_calls row
//    (driver_name_id) instead of a row of its own; no index on api_calls.start_ns.
// 5: streams (each stream CUPTI reported and how it orders with the legacy
//    default stream).
// 6: framework_ranges (PyTorch modules, ops and backward nodes).
// 7: nccl_groups (when each outermost ncclGroupEnd ran).
// 8: tracer_time (the tracer's own time per site, sampled).
inline constexpr int kSchemaVersion = 8;
// The oldest version the analyzer still reads.
inline constexpr int kOldestReadableSchemaVersion = 2;

// Trace tables recorded only from a later version on: a trace of an earlier
// version lacks them and is not damaged (their readers do without them).
struct TableAddedLater {
  const char* table;
  int version;
};
inline constexpr TableAddedLater kTablesAddedLater[] = {{"streams", 5}, {"framework_ranges", 6},
                                                    {"nccl_groups", 7}, {"tracer_time", 8}};

// Meta's key for how many of PyTorch's ops the tracer recorded one of
// (APPTRACER_FRAMEWORK_CONTEXT=sampled); absent: every one.
inline constexpr const char* kMetaOpSampleEvery = "framework_ranges.op_sample_every";

// Values of meta's `status` key.
inline constexpr const char* kStatusRecording = "incomplete";
inline constexpr const char* kStatusComplete = "complete";

// SQL that creates every trace table (tables.def, roles meta and trace), view
// and index, fills `enum_values`, `schema_tables` and `schema_columns`, and
// sets meta.schema_version. Run it inside one transaction on an empty database.
std::string trace_schema_sql();

// The same in two steps, for a writer that loads first and indexes last:
// tables with the indexes kept while recording (keys that grow with time),
// enum values and version; then the indexes built at the end (sorting once
// costs less than keeping an index on keys that come in any order).
std::string trace_tables_sql();
std::string trace_indexes_sql();

struct TableInfo;
// An analysis table (tables.def role Analysis) added to an existing trace:
// the table, its indexes and, with `describe`, its rows in schema_tables and
// schema_columns (traces older than schema 3 have neither table).
std::string analysis_table_sql(const TableInfo& table, bool describe);

}  // namespace apptracer
