#include "replay_input.h"

#include <algorithm>
#include <map>

#include "migration_groups.h"
#include "trace_file.h"
#include "um_attribution.h"

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
    Statement rows = db_.prepare(
        "SELECT id, call_correlation_id, coalesce(demangled_id, name_id), device, stream, "
        "api_start_ns, gpu_start_ns, gpu_end_ns FROM kernels");
    while (rows.step()) {
      ReplayOp op;
      op.kind = OpKind::Kernel;
      op.source_id = rows.int64(0);
      op.call = call_of(rows.optional_int64(1));
      op.name_id = rows.is_null(2) ? 0 : rows.int64(2);
      op.device = rows.optional_int64(3);
      op.stream = rows.optional_int64(4);
      set_times(op, rows.optional_int64(5), rows.optional_int64(6), rows.optional_int64(7));
      names_.push_back(op.name_id);
      out_.ops.push_back(op);
    }
  }

  // What each prefetch moved, from the migrations attributed to it: bytes,
  // direction and when (prefetch rows have no GPU times of their own).
  std::map<int64_t, dvdg::MigrationGroup> prefetch_migrations() {
    std::map<int64_t, dvdg::MigrationGroup> moved;
    for (const dvdg::MigrationGroup& group : dvdg::group_migrations(read_um_trace(db_))) {
      if (group.cause.kind != UmCauseKind::Prefetch) continue;
      auto [it, inserted] = moved.emplace(group.cause.row, group);
      if (inserted) continue;
      it->second.bytes += group.bytes;
      it->second.start_ns = std::min(it->second.start_ns, group.start_ns);
      it->second.end_ns = std::max(it->second.end_ns, group.end_ns);
    }
    return moved;
  }

  void read_copies() {
    std::map<int64_t, dvdg::MigrationGroup> prefetched = prefetch_migrations();
    Statement rows = db_.prepare(
        "SELECT id, call_correlation_id, kind, bytes, src_memory, dst_memory, src_device, "
        "dst_device, src_numa_node, dst_numa_node, stream, is_async, api_start_ns, gpu_start_ns, "
        "gpu_end_ns FROM memcpys");
    while (rows.step()) {
      ReplayOp op;
      op.kind = OpKind::Copy;
      op.source_id = rows.int64(0);
      op.call = call_of(rows.optional_int64(1));
      op.copy_kind = static_cast<CopyKind>(rows.int64(2));
      op.bytes = rows.int64(3);
      op.src_memory = static_cast<MemoryKind>(rows.int64(4));
      op.dst_memory = static_cast<MemoryKind>(rows.int64(5));
      op.src_device = rows.optional_int64(6);
      op.dst_device = rows.optional_int64(7);
      op.src_numa = rows.optional_int64(8);
      op.dst_numa = rows.optional_int64(9);
      op.stream = rows.optional_int64(10);
      op.is_async = rows.int64(11) != 0;
      op.device = is_device_memory(op.dst_memory) && op.dst_device ? op.dst_device : op.src_device;
      if (!op.device) op.device = op.dst_device;
      set_times(op, rows.optional_int64(12), rows.optional_int64(13), rows.optional_int64(14));
      if (op.copy_kind == CopyKind::Prefetch) {
        op.kind = OpKind::Prefetch;
        op.bytes = 0;
        auto found = prefetched.find(op.source_id);
        if (found != prefetched.end()) {
          const dvdg::MigrationGroup& group = found->second;
          op.bytes = group.bytes;
          op.src_device = group.from == kHostResidency ? std::nullopt : std::optional(group.from);
          op.dst_device = group.to == kHostResidency ? std::nullopt : std::optional(group.to);
          op.start_ns = std::max(op.issue_ns, group.start_ns);
          op.end_ns = std::max(op.start_ns, group.end_ns);
        }
        op.device = op.dst_device ? op.dst_device : op.src_device;
      }
      out_.ops.push_back(op);
    }
  }

  void read_memsets() {
    Statement rows = db_.prepare(
        "SELECT id, call_correlation_id, bytes, device, stream, api_start_ns, gpu_start_ns, "
        "gpu_end_ns FROM memsets");
    while (rows.step()) {
      ReplayOp op;
      op.kind = OpKind::Memset;
      op.source_id = rows.int64(0);
      op.call = call_of(rows.optional_int64(1));
      op.bytes = rows.int64(2);
      op.device = rows.optional_int64(3);
      op.stream = rows.optional_int64(4);
      set_times(op, rows.optional_int64(5), rows.optional_int64(6), rows.optional_int64(7));
      out_.ops.push_back(op);
    }
  }

  void read_stream_events() {
    Statement rows = db_.prepare(
        "SELECT id, call_correlation_id, kind, event_handle, stream, device, ns FROM stream_events");
    while (rows.step()) {
      ReplayOp op;
      op.kind = static_cast<StreamEventKind>(rows.int64(2)) == StreamEventKind::Record
                    ? OpKind::EventRecord
                    : OpKind::EventWait;
      op.source_id = rows.int64(0);
      op.call = call_of(rows.optional_int64(1));
      op.event_handle = rows.int64(3);
      op.stream = rows.optional_int64(4);
      op.device = rows.optional_int64(5);
      op.issue_ns = op.start_ns = op.end_ns = rows.int64(6);
      out_.ops.push_back(op);
    }
  }

  void read_syncs() {
    Statement rows = db_.prepare(
        "SELECT call_correlation_id, kind, device, stream, event_handle FROM syncs");
    while (rows.step()) {
      SyncCall sync;
      sync.call = call_of(rows.optional_int64(0));
      if (sync.call < 0) continue;  // no call to block
      sync.kind = static_cast<SyncKind>(rows.int64(1));
      sync.device = rows.optional_int64(2);
      sync.stream = rows.optional_int64(3);
      sync.event_handle = rows.optional_int64(4);
      out_.syncs.push_back(sync);
    }
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
    while (devices.step()) {
      auto ordinal = static_cast<size_t>(devices.int64(0));
      if (ordinal >= out_.device_names.size()) out_.device_names.resize(ordinal + 1);
      out_.device_names[ordinal] = devices.text(1);
    }
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
