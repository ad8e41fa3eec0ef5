// The trace database schema: the contract between tracer and analyzer.
//
// Conventions (see DESIGN.md): one row per event; integers wherever possible;
// text interned in `strings`; all timestamps are nanoseconds on the CUPTI
// clock; addresses, handles and sizes are stored as SQLite INTEGER (64-bit
// signed: an address above 2^63 reads back negative, which no CUDA address is).
// Rows reference their API call by `call_correlation_id` (the correlation id
// CUPTI gave the outermost runtime or driver call), which is also the key GPU
// activity records carry.
#include "apptracer/schema.h"

#include <string>

#include "apptracer/enums.h"

namespace apptracer {

namespace {

constexpr const char* kTraceTables = R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT
);
CREATE TABLE strings (
  id   INTEGER PRIMARY KEY,
  text TEXT NOT NULL
);
CREATE TABLE enum_values (
  enum  TEXT NOT NULL,
  value INTEGER NOT NULL,
  name  TEXT NOT NULL,
  PRIMARY KEY (enum, value)
);
CREATE TABLE devices (
  id                 INTEGER PRIMARY KEY,  -- CUDA device ordinal
  name               TEXT,
  uuid               TEXT,
  pci_bus_id         TEXT,
  cc_major           INTEGER,
  cc_minor           INTEGER,
  total_memory_bytes INTEGER,
  sm_count           INTEGER,
  numa_node          INTEGER               -- host NUMA node closest to the GPU, -1 if unknown
);
CREATE TABLE threads (
  tid           INTEGER PRIMARY KEY,       -- OS thread id
  name          TEXT,
  first_seen_ns INTEGER
);
CREATE TABLE api_calls (
  id                    INTEGER PRIMARY KEY,
  correlation_id        INTEGER NOT NULL,
  parent_correlation_id INTEGER,           -- the runtime call a driver call served, else NULL
                                           -- (CUDA 13 gives such a driver call the runtime
                                           -- call's correlation id too: join on domain)
  domain                INTEGER NOT NULL,  -- enum api_domain
  cbid                  INTEGER NOT NULL,  -- CUPTI callback id within the domain
  name_id               INTEGER NOT NULL REFERENCES strings(id),
  tid                   INTEGER NOT NULL,
  start_ns              INTEGER NOT NULL,
  end_ns                INTEGER NOT NULL,
  return_code           INTEGER NOT NULL,  -- cudaError_t / CUresult
  device                INTEGER,
  stream                INTEGER            -- CUPTI stream id, NULL when the call names none
);
CREATE TABLE allocations (
  id             INTEGER PRIMARY KEY,
  kind           INTEGER NOT NULL,         -- enum alloc_kind
  address        INTEGER NOT NULL,
  bytes          INTEGER NOT NULL,
  device         INTEGER,                  -- NULL for host memory
  numa_node      INTEGER,
  flags          INTEGER NOT NULL DEFAULT 0, -- the flags the program passed
  pitch          INTEGER,                  -- row pitch of pitched/3D allocations
  alloc_correlation_id INTEGER,
  alloc_ns       INTEGER NOT NULL,
  alloc_tid      INTEGER,
  free_correlation_id  INTEGER,
  free_ns        INTEGER                   -- NULL while live at the end of the trace
);
CREATE TABLE memcpys (
  id                  INTEGER PRIMARY KEY,
  call_correlation_id INTEGER,
  kind                INTEGER NOT NULL,    -- enum copy_kind
  src_address         INTEGER,
  dst_address         INTEGER,
  bytes               INTEGER NOT NULL,
  src_alloc_id        INTEGER REFERENCES allocations(id),
  dst_alloc_id        INTEGER REFERENCES allocations(id),
  src_offset          INTEGER,             -- byte offset of src_address in its allocation
  dst_offset          INTEGER,
  src_memory          INTEGER NOT NULL,    -- enum memory_kind
  dst_memory          INTEGER NOT NULL,
  src_device          INTEGER,
  dst_device          INTEGER,
  src_numa_node       INTEGER,             -- host endpoints: NUMA node of most of the pages
  dst_numa_node       INTEGER,             -- (NULL: not host memory, or no page resident)
  stream              INTEGER,
  is_async            INTEGER NOT NULL,
  width               INTEGER,             -- 2D/3D copies: bytes per row
  height              INTEGER,             -- rows (times depth for 3D)
  src_pitch           INTEGER,
  dst_pitch           INTEGER,
  api_start_ns        INTEGER,
  gpu_start_ns        INTEGER,
  gpu_end_ns          INTEGER
);
CREATE TABLE memsets (
  id                  INTEGER PRIMARY KEY,
  call_correlation_id INTEGER,
  address             INTEGER,
  bytes               INTEGER NOT NULL,
  value               INTEGER NOT NULL,
  element_size        INTEGER NOT NULL DEFAULT 1,
  alloc_id            INTEGER REFERENCES allocations(id),
  alloc_offset        INTEGER,
  memory              INTEGER NOT NULL,    -- enum memory_kind
  device              INTEGER,
  stream              INTEGER,
  is_async            INTEGER NOT NULL,
  api_start_ns        INTEGER,
  gpu_start_ns        INTEGER,
  gpu_end_ns          INTEGER
);
CREATE TABLE kernels (
  id                  INTEGER PRIMARY KEY,
  call_correlation_id INTEGER,
  name_id             INTEGER REFERENCES strings(id),  -- mangled
  demangled_id        INTEGER REFERENCES strings(id),
  launch_kind         INTEGER NOT NULL,    -- enum launch_kind
  device              INTEGER,
  stream              INTEGER,
  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  block_x INTEGER, block_y INTEGER, block_z INTEGER,
  dynamic_shared_bytes INTEGER,
  static_shared_bytes  INTEGER,
  registers_per_thread INTEGER,
  function_handle     INTEGER,
  graph_node_id       INTEGER,
  api_start_ns        INTEGER,
  gpu_start_ns        INTEGER,
  gpu_end_ns          INTEGER
);
-- One row per 8-byte-aligned word of a launch's parameter buffer that may be
-- a pointer: it fell in the range of addresses CUDA handed out and the
-- signature does not say it is a number. alloc_id is NULL when it points into
-- no allocation live at launch time (then access is unknown).
CREATE TABLE kernel_args (
  kernel_id     INTEGER NOT NULL REFERENCES kernels(id),
  param_index   INTEGER,                   -- NULL when the parameter layout is unknown
  offset        INTEGER NOT NULL,          -- byte offset of the word in the parameter buffer
  size          INTEGER NOT NULL,          -- size of the parameter holding the word
  raw_value     INTEGER,
  alloc_id      INTEGER REFERENCES allocations(id),
  alloc_offset  INTEGER,
  access        INTEGER NOT NULL,          -- enum access_kind
  access_source INTEGER NOT NULL           -- enum access_source
);
CREATE TABLE syncs (
  id                  INTEGER PRIMARY KEY,
  call_correlation_id INTEGER,
  kind                INTEGER NOT NULL,    -- enum sync_kind
  device              INTEGER,
  stream              INTEGER,
  event_handle        INTEGER,
  tid                 INTEGER,
  start_ns            INTEGER NOT NULL,    -- host entered the call
  end_ns              INTEGER NOT NULL     -- host left it: end - start is the time blocked
);
CREATE TABLE stream_events (
  id                  INTEGER PRIMARY KEY,
  call_correlation_id INTEGER,
  kind                INTEGER NOT NULL,    -- enum stream_event_kind
  event_handle        INTEGER NOT NULL,
  stream              INTEGER,
  device              INTEGER,
  ns                  INTEGER NOT NULL
);
-- One row per CUPTI unified-memory counter record: a migration (bytes moved
-- between host and a GPU or between GPUs), a GPU page-fault group, a CPU page
-- fault, thrashing, throttling or a remote mapping. Devices are NULL on the
-- host side.
CREATE TABLE um_events (
  id             INTEGER PRIMARY KEY,
  counter_kind   INTEGER NOT NULL,         -- enum um_counter_kind
  address        INTEGER,                  -- first byte of the region (faults: the faulting page)
  bytes          INTEGER,                  -- region size (migrations, thrashing, remote map), else NULL
  alloc_id       INTEGER REFERENCES allocations(id),
  alloc_offset   INTEGER,
  src_device     INTEGER,
  dst_device     INTEGER,
  start_ns       INTEGER,
  end_ns         INTEGER,                  -- NULL where CUPTI gives no end
  value          INTEGER,                  -- CUPTI's value: bytes, fault groups, or a CPU fault's PC
  cause          INTEGER,                  -- by kind: enum um_migration_cause, um_access_type,
                                           -- um_remote_map_cause; else NULL
  flags          INTEGER                   -- CUPTI's flags as delivered
);
-- Placement hints: cudaMemAdvise / cuMemAdvise (both forms) and stream
-- attachment of managed memory. Prefetches are rows of memcpys (kind prefetch).
CREATE TABLE mem_advice (
  id                  INTEGER PRIMARY KEY,
  call_correlation_id INTEGER,
  advice              INTEGER NOT NULL,    -- enum mem_advice
  address             INTEGER,
  bytes               INTEGER,             -- 0 for a stream attachment of the whole allocation
  alloc_id            INTEGER REFERENCES allocations(id),
  alloc_offset        INTEGER,
  location_type       INTEGER,             -- enum mem_location_type
  location_id         INTEGER,             -- device ordinal or NUMA node, by location_type
  stream              INTEGER,             -- stream attachments
  tid                 INTEGER,
  ns                  INTEGER NOT NULL
);
CREATE TABLE nvtx_ranges (
  id        INTEGER PRIMARY KEY,
  name_id   INTEGER REFERENCES strings(id),
  tid       INTEGER,
  domain_id INTEGER REFERENCES strings(id),
  depth     INTEGER,
  start_ns  INTEGER NOT NULL,
  end_ns    INTEGER
);
)sql";

// Every column the analyzer joins or range-scans on has an index. The tracer
// creates them when the program ends (a trace cut short by SIGKILL has none;
// queries on it are slower, not wrong).
constexpr const char* kTraceIndexes = R"sql(
CREATE INDEX api_calls_correlation ON api_calls(correlation_id);
CREATE INDEX api_calls_start ON api_calls(start_ns);
CREATE INDEX allocations_address ON allocations(address);
CREATE INDEX memcpys_call ON memcpys(call_correlation_id);
CREATE INDEX memcpys_src_alloc ON memcpys(src_alloc_id);
CREATE INDEX memcpys_dst_alloc ON memcpys(dst_alloc_id);
CREATE INDEX memsets_call ON memsets(call_correlation_id);
CREATE INDEX memsets_alloc ON memsets(alloc_id);
CREATE INDEX kernels_call ON kernels(call_correlation_id);
CREATE INDEX kernels_start ON kernels(gpu_start_ns);
CREATE INDEX kernel_args_kernel ON kernel_args(kernel_id);
CREATE INDEX kernel_args_alloc ON kernel_args(alloc_id);
CREATE INDEX syncs_call ON syncs(call_correlation_id);
CREATE INDEX stream_events_event ON stream_events(event_handle);
CREATE INDEX um_events_alloc ON um_events(alloc_id);
CREATE INDEX um_events_start ON um_events(start_ns);
CREATE INDEX mem_advice_alloc ON mem_advice(alloc_id);
)sql";

#define APPTRACER_ENUM_ROW(name, value, text) {value, text},

struct EnumRow {
  int value;
  const char* name;
};

template <size_t N>
void append_enum_rows(std::string& sql, const char* enum_name, const EnumRow (&rows)[N]) {
  for (const EnumRow& row : rows) {
    sql += "INSERT INTO enum_values VALUES ('";
    sql += enum_name;
    sql += "', " + std::to_string(row.value) + ", '" + row.name + "');\n";
  }
}

}  // namespace

std::string trace_schema_sql() { return trace_tables_sql() + trace_indexes_sql(); }

std::string trace_indexes_sql() { return kTraceIndexes; }

std::string trace_tables_sql() {
  std::string sql = kTraceTables;
  static const EnumRow api_domains[] = {APPTRACER_API_DOMAINS(APPTRACER_ENUM_ROW)};
  static const EnumRow alloc_kinds[] = {APPTRACER_ALLOC_KINDS(APPTRACER_ENUM_ROW)};
  static const EnumRow memory_kinds[] = {APPTRACER_MEMORY_KINDS(APPTRACER_ENUM_ROW)};
  static const EnumRow copy_kinds[] = {APPTRACER_COPY_KINDS(APPTRACER_ENUM_ROW)};
  static const EnumRow sync_kinds[] = {APPTRACER_SYNC_KINDS(APPTRACER_ENUM_ROW)};
  static const EnumRow stream_event_kinds[] = {APPTRACER_STREAM_EVENT_KINDS(APPTRACER_ENUM_ROW)};
  static const EnumRow launch_kinds[] = {APPTRACER_LAUNCH_KINDS(APPTRACER_ENUM_ROW)};
  static const EnumRow access_kinds[] = {APPTRACER_ACCESS_KINDS(APPTRACER_ENUM_ROW)};
  static const EnumRow access_sources[] = {APPTRACER_ACCESS_SOURCES(APPTRACER_ENUM_ROW)};
  static const EnumRow um_counter_kinds[] = {APPTRACER_UM_COUNTER_KINDS(APPTRACER_ENUM_ROW)};
  static const EnumRow um_migration_causes[] = {APPTRACER_UM_MIGRATION_CAUSES(APPTRACER_ENUM_ROW)};
  static const EnumRow um_access_types[] = {APPTRACER_UM_ACCESS_TYPES(APPTRACER_ENUM_ROW)};
  static const EnumRow um_remote_map_causes[] = {
      APPTRACER_UM_REMOTE_MAP_CAUSES(APPTRACER_ENUM_ROW)};
  static const EnumRow mem_advices[] = {APPTRACER_MEM_ADVICES(APPTRACER_ENUM_ROW)};
  static const EnumRow mem_location_types[] = {APPTRACER_MEM_LOCATION_TYPES(APPTRACER_ENUM_ROW)};
  append_enum_rows(sql, "api_domain", api_domains);
  append_enum_rows(sql, "alloc_kind", alloc_kinds);
  append_enum_rows(sql, "memory_kind", memory_kinds);
  append_enum_rows(sql, "copy_kind", copy_kinds);
  append_enum_rows(sql, "sync_kind", sync_kinds);
  append_enum_rows(sql, "stream_event_kind", stream_event_kinds);
  append_enum_rows(sql, "launch_kind", launch_kinds);
  append_enum_rows(sql, "access_kind", access_kinds);
  append_enum_rows(sql, "access_source", access_sources);
  append_enum_rows(sql, "um_counter_kind", um_counter_kinds);
  append_enum_rows(sql, "um_migration_cause", um_migration_causes);
  append_enum_rows(sql, "um_access_type", um_access_types);
  append_enum_rows(sql, "um_remote_map_cause", um_remote_map_causes);
  append_enum_rows(sql, "mem_advice", mem_advices);
  append_enum_rows(sql, "mem_location_type", mem_location_types);
  sql += "INSERT INTO meta VALUES ('schema_version', '" + std::to_string(kSchemaVersion) + "');\n";
  return sql;
}

}  // namespace apptracer
