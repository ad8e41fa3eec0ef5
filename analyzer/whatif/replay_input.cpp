#include "analyzer/whatif/replay_input.h"

#include <algorithm>
#include <map>

#include "analyzer/trace/framework.h"
#include "analyzer/trace/migration_groups.h"
#include "analyzer/trace/trace_file.h"
#include "apptracer/saturating.h"

namespace apptracer::whatif {

namespace {

using trace::Packed;

// A thread counts as woken by another thread's call when it had idled and
// began its call soon after that call ended: within kMostWakeNs, and within
// the last quarter of its own idle time (else it was busy with its own work,
// which the other call did not start). Wider than a thread's wake-up
// latency: PyTorch's autograd thread does its own host work before the
// backward pass's first launch.
constexpr int64_t kMostWakeNs = 500'000;
constexpr int64_t kIdleToWakeRatio = 4;

// Sets each call's woken_by (HostCall): the latest call of another thread
// that ended before it began, after its thread's previous call ended.
void find_wakers(std::vector<HostCall>& calls) {
  std::vector<int32_t> by_end(calls.size());
  for (size_t c = 0; c < calls.size(); ++c) by_end[c] = static_cast<int32_t>(c);
  std::sort(by_end.begin(), by_end.end(), [&](int32_t a, int32_t b) { return calls[a].end_ns < calls[b].end_ns; });
  for (HostCall& call : calls) {
    auto after = std::lower_bound(by_end.begin(), by_end.end(), call.start_ns,
                                  [&](int32_t c, int64_t start) { return calls[c].end_ns < start; });
    if (after == by_end.begin()) continue;
    const HostCall& latest = calls[*std::prev(after)];
    // The thread's own previous call ended last: nothing else happened meanwhile.
    if (latest.tid == call.tid) continue;
    int64_t wake = elapsed_ns(latest.end_ns, call.start_ns);
    int64_t idle = call.previous >= 0 ? elapsed_ns(calls[call.previous].end_ns, call.start_ns) : INT64_MAX;
    if (wake <= kMostWakeNs && wake <= idle / kIdleToWakeRatio) call.woken_by = *std::prev(after);
  }
}

class Reader {
 public:
  explicit Reader(trace::Trace& trace) : trace_(trace) {}

  ReplayInput read() {
    group_migrations();
    read_calls();
    find_wakers(out_.calls);
    read_kernels();
    read_copies();
    read_memsets();
    read_stream_events();
    read_syncs();
    read_streams();
    read_ranges();
    read_names();
    std::stable_sort(out_.ops.begin(), out_.ops.end(),
                     [](const ReplayOp& a, const ReplayOp& b) { return a.issue_ns < b.issue_ns; });
    return std::move(out_);
  }

 private:
  int32_t call_of(NullableInt correlation) const {
    if (!correlation) return -1;
    auto found = calls_by_correlation_.find(*correlation);
    return found == calls_by_correlation_.end() ? -1 : found->second;
  }

  // The op a row is, issued by its call.
  template <typename Row>
  ReplayOp op_of(const Packed<Row>& row) {
    ReplayOp op;
    static_cast<trace::Operation&>(op) = trace::operation_of(row);
    op.call = call_of(row.call_correlation_id);
    return op;
  }

  void read_calls() {
    // Outermost calls only, by thread and start (the longer first); a
    // driver call inside a runtime call names it as parent.
    std::vector<const Packed<ApiCallRow>*> outermost;
    for (const Packed<ApiCallRow>& row : trace_.rows<ApiCallRow>()) {
      if (!row.parent_correlation_id) outermost.push_back(&row);
    }
    std::stable_sort(outermost.begin(), outermost.end(), [](const auto* a, const auto* b) {
      if (a->tid != b->tid) return a->tid < b->tid;
      return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns > b->end_ns;
    });
    std::optional<int64_t> tid;
    for (const Packed<ApiCallRow>* row : outermost) {
      HostCall call;
      call.row_id = row->id;
      call.tid = row->tid;
      call.name_id = row->name_id;
      call.start_ns = row->start_ns;
      call.end_ns = std::max(call.start_ns, row->end_ns);
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
      calls_by_correlation_.emplace(row->correlation_id, static_cast<int32_t>(out_.calls.size() - 1));
      names_.push_back(call.name_id);
    }
  }

  void read_kernels() {
    for (const trace::Kernel& kernel : trace_.operations().kernels()) {
      ReplayOp op = op_of(*kernel.row);
      auto faulted = faulted_in_.find(op.source_id);
      if (faulted != faulted_in_.end()) op.faulted_in_bytes = faulted->second;
      names_.push_back(op.name_id);
      out_.ops.push_back(op);
    }
  }

  // The migrations attributed to their causes: what each prefetch moved
  // (bytes, direction and when: prefetch rows have no GPU times of their
  // own), and what each kernel's accesses moved to its GPU.
  void group_migrations() {
    for (const trace::MigrationGroup& group : trace::group_migrations(trace_.unified_memory())) {
      if (group.cause.kind == trace::UmCauseKind::Kernel && group.to != trace::kHostResidency) {
        int64_t& bytes = faulted_in_[group.cause.row];
        bytes = saturating_add(bytes, group.bytes);
      }
      if (group.cause.kind != trace::UmCauseKind::Prefetch) continue;
      auto [it, inserted] = prefetched_.emplace(group.cause.row, group);
      if (inserted) continue;
      it->second.bytes = saturating_add(it->second.bytes, group.bytes);
      it->second.start_ns = std::min(it->second.start_ns, group.start_ns);
      it->second.end_ns = std::max(it->second.end_ns, group.end_ns);
    }
  }

  void read_copies() {
    const std::map<int64_t, trace::MigrationGroup>& prefetched = prefetched_;
    for (const trace::Transfer& copy : trace_.operations().copies()) {
      const auto& row = *copy.copy_row();
      ReplayOp op = op_of(row);
      op.src_memory = row.src_memory;
      op.dst_memory = row.dst_memory;
      op.src_device = row.src_device;
      op.dst_device = row.dst_device;
      op.src_numa = row.src_numa_node;
      op.dst_numa = row.dst_numa_node;
      op.dst_sampled_pages = row.dst_sampled_pages.value_or(0);
      op.dst_untouched_pages = row.dst_untouched_pages.value_or(0);
      op.is_async = row.is_async != 0;
      if (op.kind == OpKind::Prefetch) {
        op.bytes = 0;
        auto found = prefetched.find(op.source_id);
        if (found != prefetched.end()) {
          const trace::MigrationGroup& group = found->second;
          op.bytes = group.bytes;
          op.src_device = group.from == trace::kHostResidency ? NullableInt() : NullableInt(group.from);
          op.dst_device = group.to == trace::kHostResidency ? NullableInt() : NullableInt(group.to);
          op.start_ns = std::max(op.issue_ns, group.start_ns);
          op.end_ns = std::max(op.start_ns, group.end_ns);
        }
        op.device = op.dst_device ? op.dst_device : op.src_device;
      }
      out_.ops.push_back(op);
    }
  }

  void read_memsets() {
    for (const trace::Transfer& memset : trace_.operations().memsets()) out_.ops.push_back(op_of(*memset.memset_row()));
  }

  void read_stream_events() {
    for (const Packed<StreamEventRow>& row : trace_.rows<StreamEventRow>()) {
      ReplayOp op = op_of(row);
      op.event_handle = row.event_handle;
      out_.ops.push_back(op);
    }
  }

  void read_syncs() {
    for (const Packed<SyncRow>& row : trace_.rows<SyncRow>()) {
      SyncCall sync;
      sync.call = call_of(row.call_correlation_id);
      if (sync.call < 0) continue;  // no call to block
      sync.kind = row.kind;
      sync.device = row.device;
      sync.stream = row.stream;
      sync.event_handle = row.event_handle;
      out_.syncs.push_back(sync);
    }
  }

  void read_streams() {
    for (const Packed<StreamRow>& row : trace_.rows<StreamRow>()) {
      if (row.stream) out_.stream_kinds[*row.stream] = row.kind;
    }
  }

  // Closed ranges, by start. XLA's own (one per thunk the step runs and per
  // compiler pass) are not the program's phases: a JAX step's ran to
  // thousands of names, the steps and the user's ranges lost among them.
  void read_ranges() {
    for (const Packed<NvtxRangeRow>& row : trace_.rows<NvtxRangeRow>()) {
      if (!row.end_ns || trace::is_xla_range_name(trace_.string(row.name_id, ""))) continue;
      out_.ranges.push_back({std::string(trace_.string(row.name_id)), row.tid.value_or(0),
                             row.depth.value_or(0), row.start_ns, *row.end_ns});
    }
    std::stable_sort(out_.ranges.begin(), out_.ranges.end(),
                     [](const NvtxRange& a, const NvtxRange& b) { return a.start_ns < b.start_ns; });
  }

  void read_names() {
    for (int64_t id : names_) out_.names.emplace(id, std::string());
    for (auto& [id, name] : out_.names) name = std::string(trace_.string(id));
    for (const Packed<DeviceRow>& row : trace_.rows<DeviceRow>())
      out_.device_names.emplace_back(trace_.text(row.name));
  }

  trace::Trace& trace_;
  ReplayInput out_;
  std::unordered_map<int64_t, int32_t> calls_by_correlation_;
  std::vector<int64_t> names_;
  std::map<int64_t, trace::MigrationGroup> prefetched_;  // by memcpys.id
  std::unordered_map<int64_t, int64_t> faulted_in_;       // kernels.id -> bytes
};

}  // namespace

const std::vector<const char*>& replay_tables() {
  static const std::vector<const char*> tables = {
      "api_calls", "kernels", "memcpys", "memsets", "stream_events", "syncs",
      "nvtx_ranges", "strings", "devices", "allocations", "um_events"};
  return tables;
}

ReplayInput read_replay_input(trace::Trace& trace) {
  const std::string& path = trace.path();
  for (const char* table : replay_tables()) {
    if (!trace.db().has_table(table)) {
      throw TraceError(path + ": no " + table +
                       " table, so nothing to replay; whatif needs a trace from 'apptracer record'");
    }
  }
  if (trace.processes().merged) {
    throw TraceError(path + ": a merged trace; whatif replays one process: give it that process's own trace");
  }
  ReplayInput input = Reader(trace).read();
  if (input.calls.empty() && input.ops.empty()) {
    throw TraceError(path + ": no API calls and no GPU work: nothing to replay");
  }
  return input;
}

}  // namespace apptracer::whatif
