#include "analyzer/trace/trace.h"
#include "replay_input.h"

#include <algorithm>
#include <map>

#include "apptracer/row_reader.h"
#include "apptracer/saturating.h"
#include "analyzer/trace/migration_groups.h"
#include "analyzer/trace/trace_file.h"
#include "analyzer/trace/unified_memory.h"

namespace apptracer::whatif {

namespace {

// Recorded times from a row's nullable columns: issued at the API call
// (else the GPU start), started on the GPU (else when issued), ended after
// it started.
void set_times(ReplayOp& op, std::optional<int64_t> issue, std::optional<int64_t> start,
               std::optional<int64_t> end) {
  op.issue_ns = issue.value_or(start.value_or(0));
  op.start_ns = std::max(op.issue_ns, start.value_or(op.issue_ns));
  op.end_ns = std::max(op.start_ns, end.value_or(op.start_ns));
}

class Reader {
 public:
  explicit Reader(Database& db) : db_(db) {}

  ReplayInput read() {
    read_calls();
    read_kernels();
    read_copies();
    read_memsets();
    read_stream_events();
    read_syncs();
    read_ranges();
    read_names();
    std::stable_sort(out_.ops.begin(), out_.ops.end(),
                     [](const ReplayOp& a, const ReplayOp& b) { return a.issue_ns < b.issue_ns; });
    return std::move(out_);
  }

 private:
  int32_t call_of(std::optional<int64_t> correlation) const {
    if (!correlation) return -1;
    auto found = calls_by_correlation_.find(*correlation);
    return found == calls_by_correlation_.end() ? -1 : found->second;
  }

  void read_calls() {
    // Outermost calls only; a driver call inside a runtime call names it as parent.
    Statement rows = db_.prepare(
        "SELECT correlation_id, tid, name_id, start_ns, end_ns, id FROM api_calls "
        "WHERE parent_correlation_id IS NULL ORDER BY tid, start_ns, end_ns DESC");
    std::optional<int64_t> tid;
    while (rows.step()) {
      HostCall call;
      call.row_id = rows.int64(5);
      call.tid = rows.int64(1);
      call.name_id = rows.int64(2);
      call.start_ns = rows.int64(3);
      call.end_ns = std::max(call.start_ns, rows.int64(4));
      bool same_thread = tid == call.tid && !out_.calls.empty();
      if (same_thread && call.start_ns < out_.calls.back().end_ns) {
        // Made while the previous call still ran: part of it.
        HostCall& outer = out_.calls.back();
        outer.end_ns = std::max(outer.end_ns, call.end_ns);
      } else {
        call.previous = same_thread ? static_cast<int32_t>(out_.calls.size() - 1) : -1;
        out_.calls.push_back(call);
      }
      tid = call.tid;
      calls_by_correlation_.emplace(rows.int64(0), static_cast<int32_t>(out_.calls.size() - 1));
      names_.push_back(call.name_id);
    }
  }

  void read_kernels() {
    for_each_row<KernelRow>(db_, "", [&](const KernelRow& row) {
      ReplayOp op;
      op.kind = OpKind::Kernel;
      op.source_id = *row.id.value;
      op.call = call_of(row.call_correlation_id);
      op.name_id = row.demangled_id.value_or(row.name_id.value_or(0));
      op.device = row.device;
      op.stream = row.stream;
      set_times(op, row.api_start_ns, row.gpu_start_ns, row.gpu_end_ns);
      names_.push_back(op.name_id);
      out_.ops.push_back(op);
    });
  }

  // What each prefetch moved, from the migrations attributed to it: bytes,
  // direction and when (prefetch rows have no GPU times of their own).
  std::map<int64_t, trace::MigrationGroup> prefetch_migrations() {
    std::map<int64_t, trace::MigrationGroup> moved;
    for (const trace::MigrationGroup& group : trace::group_migrations(trace::Trace(db_).unified_memory())) {
      if (group.cause.kind != trace::UmCauseKind::Prefetch) continue;
      auto [it, inserted] = moved.emplace(group.cause.row, group);
      if (inserted) continue;
      it->second.bytes = saturating_add(it->second.bytes, group.bytes);
      it->second.start_ns = std::min(it->second.start_ns, group.start_ns);
      it->second.end_ns = std::max(it->second.end_ns, group.end_ns);
    }
    return moved;
  }

  void read_copies() {
    std::map<int64_t, trace::MigrationGroup> prefetched = prefetch_migrations();
    for_each_row<MemcpyRow>(db_, "", [&](const MemcpyRow& row) {
      ReplayOp op;
      op.kind = OpKind::Copy;
      op.source_id = *row.id.value;
      op.call = call_of(row.call_correlation_id);
      op.copy_kind = row.kind;
      op.bytes = row.bytes;
      op.src_memory = row.src_memory;
      op.dst_memory = row.dst_memory;
      op.src_device = row.src_device;
      op.dst_device = row.dst_device;
      op.src_numa = row.src_numa_node;
      op.dst_numa = row.dst_numa_node;
      op.stream = row.stream;
      op.is_async = row.is_async != 0;
      op.device = is_device_memory(op.dst_memory) && op.dst_device ? op.dst_device : op.src_device;
      if (!op.device) op.device = op.dst_device;
      set_times(op, row.api_start_ns, row.gpu_start_ns, row.gpu_end_ns);
      if (op.copy_kind == CopyKind::Prefetch) {
        op.kind = OpKind::Prefetch;
        op.bytes = 0;
        auto found = prefetched.find(op.source_id);
        if (found != prefetched.end()) {
          const trace::MigrationGroup& group = found->second;
          op.bytes = group.bytes;
          op.src_device = group.from == trace::kHostResidency ? std::nullopt : std::optional(group.from);
          op.dst_device = group.to == trace::kHostResidency ? std::nullopt : std::optional(group.to);
          op.start_ns = std::max(op.issue_ns, group.start_ns);
          op.end_ns = std::max(op.start_ns, group.end_ns);
        }
        op.device = op.dst_device ? op.dst_device : op.src_device;
      }
      out_.ops.push_back(op);
    });
  }

  void read_memsets() {
    for_each_row<MemsetRow>(db_, "", [&](const MemsetRow& row) {
      ReplayOp op;
      op.kind = OpKind::Memset;
      op.source_id = *row.id.value;
      op.call = call_of(row.call_correlation_id);
      op.bytes = row.bytes;
      op.device = row.device;
      op.stream = row.stream;
      set_times(op, row.api_start_ns, row.gpu_start_ns, row.gpu_end_ns);
      out_.ops.push_back(op);
    });
  }

  void read_stream_events() {
    for_each_row<StreamEventRow>(db_, "", [&](const StreamEventRow& row) {
      ReplayOp op;
      op.kind = row.kind == StreamEventKind::Record ? OpKind::EventRecord : OpKind::EventWait;
      op.source_id = *row.id.value;
      op.call = call_of(row.call_correlation_id);
      op.event_handle = row.event_handle;
      op.stream = row.stream;
      op.device = row.device;
      op.issue_ns = op.start_ns = op.end_ns = row.ns;
      out_.ops.push_back(op);
    });
  }

  void read_syncs() {
    for_each_row<SyncRow>(db_, "", [&](const SyncRow& row) {
      SyncCall sync;
      sync.call = call_of(row.call_correlation_id);
      if (sync.call < 0) return;  // no call to block
      sync.kind = row.kind;
      sync.device = row.device;
      sync.stream = row.stream;
      sync.event_handle = row.event_handle;
      out_.syncs.push_back(sync);
    });
  }

  void read_ranges() {
    Statement rows = db_.prepare(
        "SELECT coalesce(s.text, ''), r.tid, coalesce(r.depth, 0), r.start_ns, r.end_ns "
        "FROM nvtx_ranges r LEFT JOIN strings s ON s.id = r.name_id "
        "WHERE r.end_ns IS NOT NULL ORDER BY r.start_ns");
    while (rows.step()) {
      out_.ranges.push_back({rows.text(0), rows.is_null(1) ? 0 : rows.int64(1), rows.int64(2),
                             rows.int64(3), rows.int64(4)});
    }
  }

  void read_names() {
    for (int64_t id : names_) out_.names.emplace(id, std::string());
    Statement rows = db_.prepare("SELECT id, text FROM strings");
    while (rows.step()) {
      auto found = out_.names.find(rows.int64(0));
      if (found != out_.names.end()) found->second = rows.text(1);
    }
    Statement devices = db_.prepare("SELECT id, coalesce(name, '') FROM devices ORDER BY id");
    while (devices.step()) out_.device_names.push_back(devices.text(1));
  }

  Database& db_;
  ReplayInput out_;
  std::unordered_map<int64_t, int32_t> calls_by_correlation_;
  std::vector<int64_t> names_;
};

}  // namespace

const std::vector<const char*>& replay_tables() {
  static const std::vector<const char*> tables = {
      "api_calls", "kernels", "memcpys", "memsets", "stream_events", "syncs",
      "nvtx_ranges", "strings", "devices", "allocations", "um_events"};
  return tables;
}

ReplayInput read_replay_input(Database& db, const std::string& path) {
  for (const char* table : replay_tables()) {
    if (!db.has_table(table)) {
      throw TraceError(path + ": no " + table +
                       " table, so nothing to replay; whatif needs a trace from 'apptracer record'");
    }
  }
  if (db.has_table("processes")) {
    throw TraceError(path + ": a merged trace; whatif replays one process: give it that process's own trace");
  }
  ReplayInput input = Reader(db).read();
  if (input.calls.empty() && input.ops.empty()) {
    throw TraceError(path + ": no API calls and no GPU work: nothing to replay");
  }
  return input;
}

}  // namespace apptracer::whatif
