#include "trace_builder.h"

#include <stdexcept>

#include "apptracer/schema.h"

namespace apptracer::testing {

TraceBuilder::TraceBuilder(const std::string& path) : db_(path, Database::Mode::Create) {
  // A test trace need not survive a power cut; without syncing each row,
  // building one on disk takes milliseconds instead of a second.
  db_.exec("PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY");
  with_transaction(db_, [&] { db_.exec(trace_schema_sql()); });
  set_meta("status", kStatusComplete);
}

int64_t TraceBuilder::string_id(const std::string& text) {
  Statement find = db_.prepare("SELECT id FROM strings WHERE text = ?");
  find.bind(1, text);
  if (find.step()) return find.int64(0);
  Statement insert = db_.prepare("INSERT INTO strings(text) VALUES (?)");
  insert.bind(1, text).run();
  return db_.last_insert_rowid();
}

void TraceBuilder::set_meta(const std::string& key, const std::string& value) {
  Statement insert = db_.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)");
  insert.bind(1, key).bind(2, value).run();
}

void TraceBuilder::add_thread(int64_t tid, const std::string& name) {
  ThreadRow row;
  row.tid = tid;
  row.name = name;
  add_row(row);
}

int64_t TraceBuilder::add(const ApiCallRow& row) {
  apptracer::ApiCallRow stored = row;
  stored.name_id = string_id(row.name);
  if (!row.driver_name.empty()) stored.driver_name_id = string_id(row.driver_name);
  return add_row(stored);
}

int64_t TraceBuilder::add(const KernelRow& row) {
  apptracer::KernelRow stored = row;
  stored.name_id = string_id(row.mangled_name);
  stored.demangled_id =
      row.demangled_name ? std::optional<int64_t>(string_id(*row.demangled_name)) : std::nullopt;
  return add_row(stored);
}

int64_t TraceBuilder::add(const NvtxRangeRow& row) {
  apptracer::NvtxRangeRow stored = row;
  stored.name_id = string_id(row.name);
  return add_row(stored);
}

int64_t TraceBuilder::add(const FrameworkRangeRow& row) {
  apptracer::FrameworkRangeRow stored = row;
  stored.name_id = string_id(row.name);
  return add_row(stored);
}

int64_t TraceBuilder::add_framework_range(FrameworkRangeKind kind, const std::string& name,
                                          int64_t start_ns, int64_t end_ns) {
  FrameworkRangeRow range;
  range.kind = kind;
  range.name = name;
  range.start_ns = start_ns;
  range.end_ns = end_ns;
  return add(range);
}

int64_t TraceBuilder::add_tracer_time(int64_t start_ns, int64_t end_ns, TracerSite site, int64_t timed_calls,
                                      int64_t timed_ns, int64_t sample_every) {
  apptracer::TracerTimeRow row;
  row.start_ns = start_ns;
  row.end_ns = end_ns;
  row.site = site;
  row.timed_calls = timed_calls;
  row.timed_ns = timed_ns;
  row.sample_every = sample_every;
  return add(row);
}

void TraceBuilder::add(const KernelArgRow& row) {
  Statement current = db_.prepare("SELECT arg_set_id FROM kernels WHERE id = ?");
  current.bind(1, row.kernel_id);
  std::optional<int64_t> set = current.step() ? current.optional_int64(0) : std::nullopt;
  if (!set) {
    KernelArgSetRow new_set;
    set = add_row(new_set);
    Statement attach = db_.prepare("UPDATE kernels SET arg_set_id = ? WHERE id = ?");
    attach.bind(1, *set).bind(2, row.kernel_id).run();
  }
  KernelArgWordRow word = row;
  word.arg_set_id = *set;
  add_row(word);
  Statement count = db_.prepare("UPDATE kernel_arg_sets SET words = words + 1 WHERE id = ?");
  count.bind(1, *set).run();
}

int64_t TraceBuilder::allocation_address(int64_t alloc_id) {
  Statement address = db_.prepare("SELECT address FROM allocations WHERE id = ?");
  address.bind(1, alloc_id);
  if (!address.step()) throw std::invalid_argument("no allocation " + std::to_string(alloc_id));
  return address.int64(0);
}

int64_t TraceBuilder::add_call(int64_t correlation_id, const std::string& name, int64_t tid, int64_t start_ns,
                               int64_t end_ns, const std::string& driver_name) {
  ApiCallRow call;
  call.correlation_id = correlation_id;
  call.name = name;
  call.driver_name = driver_name;
  call.tid = tid;
  call.start_ns = start_ns;
  call.end_ns = end_ns;
  return add(call);
}

int64_t TraceBuilder::add_block(int64_t parent, int64_t offset, int64_t bytes, int64_t alloc_ns,
                                std::optional<int64_t> free_ns) {
  SubAllocationRow row;
  row.parent_alloc_id = parent;
  row.parent_offset = offset;
  row.address = allocation_address(parent) + offset;
  row.bytes = bytes;
  row.alloc_ns = alloc_ns;
  row.free_ns = free_ns;
  return add(row);
}

int64_t TraceBuilder::add_exact_range(int64_t launch, int64_t alloc_id, int64_t offset, int64_t bytes,
                                      AccessKind access) {
  ExactAccessRow row;
  row.launch_id = launch;
  row.alloc_id = alloc_id;
  row.alloc_offset = offset;
  row.access = access;
  row.lo = allocation_address(alloc_id) + offset;
  row.hi = row.lo + bytes;
  row.approximate = 0;
  return add(row);
}

}  // namespace apptracer::testing
