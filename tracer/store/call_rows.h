// Rows a call's record makes as it is, with nothing to resolve: api_calls
// (with the interned names of the function and of its first driver call),
// syncs, stream_events, streams and nccl_groups.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "apptracer/records.h"
#include "apptracer/row_inserter.h"
#include "buffer/string_table.h"

namespace apptracer {

class ApiCallRows {
 public:
  ApiCallRows(Database& db, StringTable& strings) : strings_(strings), rows_(db) {}

  void write(const Record& r);
  void flush() { rows_.flush(); }

 private:
  // A CUPTI function name's id in strings (names are global constants: keyed by pointer).
  int64_t name_id(const char* name);

  StringTable& strings_;
  BatchInserter<ApiCallRow> rows_;
  std::unordered_map<const char*, uint32_t> name_ids_;
};

// The calls whose correlation id the work of a graph launch carries.
bool is_graph_launch(const ApiCallRecord& a);

SyncRow sync_row(const Record& r);
StreamEventRow stream_event_row(const Record& r);
StreamRow stream_row(const Record& r);
NcclGroupRow nccl_group_row(const Record& r);

}  // namespace apptracer
