#include "timeline.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "apptracer/enums.h"
#include "dvdg_flows.h"
#include "trace_processes.h"

namespace apptracer {

namespace {

std::string optional_text(std::optional<int64_t> value) {
  return value ? std::to_string(*value) : std::string("?");
}

class TimelineBuilder {
 public:
  TimelineBuilder(Database& db, Progress& progress)
      : db_(db), progress_(progress), processes_(read_trace_processes(db)) {}

  Timeline build() {
    for (const TraceProcess& process : processes_.list) process_track(process.process_id);
    read_thread_names();
    // Sized once: a big trace has millions of slices.
    timeline_.slices.reserve(static_cast<size_t>(
        row_count("api_calls") + row_count("kernels") + row_count("memcpys") +
        row_count("memsets") + row_count("nvtx_ranges")));
    add_api_calls();
    add_kernels();
    add_copies();
    add_memsets();
    add_nvtx_ranges();
    add_dvdg_flows();
    progress_.finish();
    return std::move(timeline_);
  }

 private:
  std::string process_column() const { return processes_.process_column(); }

  size_t add_track(TimelineTrack track) {
    track.uuid = timeline_.tracks.size() + 1;
    timeline_.tracks.push_back(std::move(track));
    return timeline_.tracks.size() - 1;
  }

  size_t process_track(int64_t process_id) {
    auto found = process_tracks_.find(process_id);
    if (found != process_tracks_.end()) return found->second;
    const TraceProcess& process = processes_.get(process_id);
    TimelineTrack track;
    track.kind = TimelineTrack::Kind::Process;
    track.name = process.name;
    track.pid = process.pid;
    size_t index = add_track(std::move(track));
    process_tracks_.emplace(process_id, index);
    return index;
  }

  size_t thread_track(int64_t process_id, int64_t tid, TimelineTrack::Kind kind) {
    auto key = std::make_tuple(process_id, tid, kind);
    auto found = thread_tracks_.find(key);
    if (found != thread_tracks_.end()) return found->second;
    const TimelineTrack& process = timeline_.tracks[process_track(process_id)];
    TimelineTrack track;
    track.kind = kind;
    track.parent_uuid = process.uuid;
    track.pid = process.pid;
    track.tid = tid;
    auto name = thread_names_.find({process_id, tid});
    std::string thread = name != thread_names_.end() && !name->second.empty()
                             ? name->second + " " + std::to_string(tid)
                             : "thread " + std::to_string(tid);
    track.name = kind == TimelineTrack::Kind::Nvtx ? "NVTX " + thread : thread;
    size_t index = add_track(std::move(track));
    thread_tracks_.emplace(key, index);
    return index;
  }

  size_t stream_track(int64_t process_id, std::optional<int64_t> device,
                      std::optional<int64_t> stream) {
    auto key = std::make_tuple(process_id, device, stream);
    auto found = stream_tracks_.find(key);
    if (found != stream_tracks_.end()) return found->second;
    const TimelineTrack& process = timeline_.tracks[process_track(process_id)];
    TimelineTrack track;
    track.kind = TimelineTrack::Kind::Stream;
    track.parent_uuid = process.uuid;
    track.pid = process.pid;
    track.name = "GPU " + optional_text(device) + " stream " + optional_text(stream);
    size_t index = add_track(std::move(track));
    stream_tracks_.emplace(key, index);
    return index;
  }

  uint32_t intern(const std::string& name) {
    auto [found, inserted] = name_ids_.emplace(name, static_cast<uint32_t>(timeline_.names.size()));
    if (inserted) timeline_.names.push_back(name);
    return found->second;
  }

  size_t add_slice(TimelineSlice slice) {
    slice.end_ns = std::max(slice.end_ns, slice.start_ns);
    timeline_.slices.push_back(std::move(slice));
    return timeline_.slices.size() - 1;
  }

  int64_t row_count(const std::string& table) {
    Statement count = db_.prepare("SELECT count(*) FROM " + table);
    count.step();
    return count.int64(0);
  }

  void read_thread_names() {
    Statement rows = db_.prepare("SELECT " + process_column() + ", tid, name FROM threads");
    while (rows.step()) thread_names_[{rows.int64(0), rows.int64(1)}] = rows.text(2);
  }

  void add_api_calls() {
    int64_t total = row_count("api_calls");
    Statement rows = db_.prepare(
        "SELECT " + process_column() + ", a.correlation_id, a.domain, s.text, a.tid, a.start_ns, "
        "a.end_ns, a.return_code FROM api_calls a JOIN strings s ON s.id = a.name_id "
        "ORDER BY a.start_ns");
    int64_t done = 0;
    while (rows.step()) {
      if (++done % 4096 == 0 || done == total) progress_.update("API calls", done, total);
      TimelineSlice slice;
      slice.args.reserve(3);
      slice.track = thread_track(rows.int64(0), rows.int64(4), TimelineTrack::Kind::Thread);
      slice.start_ns = rows.int64(5);
      slice.end_ns = rows.int64(6);
      slice.name = intern(rows.text(3));
      slice.category = "cuda_api";
      int64_t correlation_id = rows.int64(1);
      slice.args.push_back({"correlation_id", correlation_id});
      slice.args.push_back(
          {"domain", std::string(to_string(static_cast<ApiDomain>(rows.int64(2))))});
      if (rows.int64(7) != 0) slice.args.push_back({"return_code", rows.int64(7)});
      size_t index = add_slice(std::move(slice));
      // Ordered by start, so the outermost call of a correlation id wins.
      call_slices_.emplace(correlation_id, index);
    }
  }

  // Draws the arrow from the API call that issued GPU work to the work.
  void link_to_call(std::optional<int64_t> correlation_id, size_t gpu_slice) {
    if (!correlation_id) return;
    auto call = call_slices_.find(*correlation_id);
    if (call == call_slices_.end()) return;
    uint64_t flow = ++timeline_.flow_count;
    ++timeline_.api_flow_count;
    timeline_.slices[call->second].flows_out.push_back(flow);
    timeline_.slices[gpu_slice].flows_in.push_back(flow);
  }

  // "#12 device 4096 B rw; #13 ..." for every allocation a kernel's
  // arguments point into (once, however many words point into it): the link
  // from GPU work to the memory it used.
  std::unordered_map<int64_t, std::string> kernel_allocations() {
    std::unordered_map<int64_t, std::string> described;
    Statement rows = db_.prepare(
        "SELECT ka.kernel_id, al.id, al.kind, al.bytes, ka.access FROM kernel_args ka "
        "JOIN allocations al ON al.id = ka.alloc_id GROUP BY ka.kernel_id, al.id, ka.access "
        "ORDER BY ka.kernel_id, min(ka.offset)");
    while (rows.step()) {
      std::string& text = described[rows.int64(0)];
      if (!text.empty()) text += "; ";
      text += "#" + std::to_string(rows.int64(1)) + " " +
              std::string(to_string(static_cast<AllocKind>(rows.int64(2)))) + " " +
              std::to_string(rows.int64(3)) + " B " +
              std::string(to_string(static_cast<AccessKind>(rows.int64(4))));
    }
    return described;
  }

  void add_kernels() {
    std::unordered_map<int64_t, std::string> allocations = kernel_allocations();
    int64_t total = row_count("kernels");
    Statement rows = db_.prepare(
        "SELECT " + process_column() + ", k.id, k.call_correlation_id, COALESCE(d.text, m.text, '?'), "
        "k.device, k.stream, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z, "
        "k.gpu_start_ns, k.gpu_end_ns FROM kernels k LEFT JOIN strings d ON d.id = k.demangled_id "
        "LEFT JOIN strings m ON m.id = k.name_id "
        "WHERE k.gpu_start_ns IS NOT NULL AND k.gpu_end_ns IS NOT NULL");
    int64_t done = 0;
    while (rows.step()) {
      if (++done % 4096 == 0 || done == total) progress_.update("kernels", done, total);
      TimelineSlice slice;
      slice.args.reserve(5);
      slice.track = stream_track(rows.int64(0), rows.optional_int64(4), rows.optional_int64(5));
      slice.start_ns = rows.int64(12);
      slice.end_ns = rows.int64(13);
      slice.name = intern(rows.text(3));
      slice.category = "kernel";
      int64_t kernel_id = rows.int64(1);
      slice.args.push_back({"kernel_id", kernel_id});
      if (!rows.is_null(2)) slice.args.push_back({"correlation_id", rows.int64(2)});
      auto dims = [&](int first) {
        return optional_text(rows.optional_int64(first)) + "," +
               optional_text(rows.optional_int64(first + 1)) + "," +
               optional_text(rows.optional_int64(first + 2));
      };
      slice.args.push_back({"grid", dims(6)});
      slice.args.push_back({"block", dims(9)});
      auto used = allocations.find(kernel_id);
      if (used != allocations.end()) slice.args.push_back({"allocations", used->second});
      size_t index = add_slice(std::move(slice));
      gpu_slices_[{GpuOp::Kernel, kernel_id}] = index;
      link_to_call(rows.optional_int64(2), index);
    }
  }

  void add_copies() {
    int64_t total = row_count("memcpys");
    Statement rows = db_.prepare(
        "SELECT " + process_column() + ", id, call_correlation_id, kind, bytes, src_alloc_id, "
        "dst_alloc_id, src_memory, dst_memory, COALESCE(dst_device, src_device), stream, "
        "gpu_start_ns, gpu_end_ns FROM memcpys "
        "WHERE gpu_start_ns IS NOT NULL AND gpu_end_ns IS NOT NULL");
    int64_t done = 0;
    while (rows.step()) {
      if (++done % 4096 == 0 || done == total) progress_.update("copies", done, total);
      TimelineSlice slice;
      slice.args.reserve(7);
      slice.track = stream_track(rows.int64(0), rows.optional_int64(9), rows.optional_int64(10));
      slice.start_ns = rows.int64(11);
      slice.end_ns = rows.int64(12);
      slice.name = intern("memcpy " + std::string(to_string(static_cast<CopyKind>(rows.int64(3)))));
      slice.category = "memcpy";
      int64_t copy_id = rows.int64(1);
      slice.args.push_back({"memcpy_id", copy_id});
      if (!rows.is_null(2)) slice.args.push_back({"correlation_id", rows.int64(2)});
      slice.args.push_back({"bytes", rows.int64(4)});
      slice.args.push_back(
          {"src_memory", std::string(to_string(static_cast<MemoryKind>(rows.int64(7))))});
      slice.args.push_back(
          {"dst_memory", std::string(to_string(static_cast<MemoryKind>(rows.int64(8))))});
      if (!rows.is_null(5)) slice.args.push_back({"src_allocation", rows.int64(5)});
      if (!rows.is_null(6)) slice.args.push_back({"dst_allocation", rows.int64(6)});
      size_t index = add_slice(std::move(slice));
      gpu_slices_[{GpuOp::Copy, copy_id}] = index;
      link_to_call(rows.optional_int64(2), index);
    }
  }

  void add_memsets() {
    int64_t total = row_count("memsets");
    Statement rows = db_.prepare(
        "SELECT " + process_column() + ", id, call_correlation_id, bytes, value, alloc_id, memory, "
        "device, stream, gpu_start_ns, gpu_end_ns FROM memsets "
        "WHERE gpu_start_ns IS NOT NULL AND gpu_end_ns IS NOT NULL");
    int64_t done = 0;
    while (rows.step()) {
      if (++done % 4096 == 0 || done == total) progress_.update("memsets", done, total);
      TimelineSlice slice;
      slice.args.reserve(6);
      slice.track = stream_track(rows.int64(0), rows.optional_int64(7), rows.optional_int64(8));
      slice.start_ns = rows.int64(9);
      slice.end_ns = rows.int64(10);
      slice.name = intern("memset");
      slice.category = "memset";
      int64_t memset_id = rows.int64(1);
      slice.args.push_back({"memset_id", memset_id});
      if (!rows.is_null(2)) slice.args.push_back({"correlation_id", rows.int64(2)});
      slice.args.push_back({"bytes", rows.int64(3)});
      slice.args.push_back({"value", rows.int64(4)});
      slice.args.push_back({"memory", std::string(to_string(static_cast<MemoryKind>(rows.int64(6))))});
      if (!rows.is_null(5)) slice.args.push_back({"allocation", rows.int64(5)});
      size_t index = add_slice(std::move(slice));
      gpu_slices_[{GpuOp::Memset, memset_id}] = index;
      link_to_call(rows.optional_int64(2), index);
    }
  }

  // A range still open when the trace ended is drawn up to the trace's last event.
  void add_nvtx_ranges() {
    int64_t trace_end = 0;
    for (const TimelineSlice& slice : timeline_.slices) trace_end = std::max(trace_end, slice.end_ns);
    Statement rows = db_.prepare(
        "SELECT " + process_column() + ", n.tid, COALESCE(s.text, '?'), n.start_ns, n.end_ns, "
        "n.depth FROM nvtx_ranges n LEFT JOIN strings s ON s.id = n.name_id ORDER BY n.start_ns");
    while (rows.step()) {
      TimelineSlice slice;
      slice.args.reserve(1);
      slice.track = thread_track(rows.int64(0), rows.int64(1), TimelineTrack::Kind::Nvtx);
      slice.start_ns = rows.int64(3);
      slice.end_ns = rows.is_null(4) ? std::max(trace_end, slice.start_ns) : rows.int64(4);
      slice.name = intern(rows.text(2));
      slice.category = "nvtx";
      if (rows.is_null(4)) slice.args.push_back({"unclosed", int64_t{1}});
      add_slice(std::move(slice));
    }
  }

  void add_dvdg_flows() {
    for (const DvdgFlow& flow : read_dvdg_flows(db_)) {
      auto from = gpu_slices_.find({flow.from_kind, flow.from_id});
      auto to = gpu_slices_.find({flow.to_kind, flow.to_id});
      if (from == gpu_slices_.end() || to == gpu_slices_.end() || from->second == to->second) continue;
      uint64_t id = ++timeline_.flow_count;
      ++timeline_.dvdg_flow_count;
      timeline_.slices[from->second].flows_out.push_back(id);
      timeline_.slices[to->second].flows_in.push_back(id);
    }
  }

  Database& db_;
  Progress& progress_;
  TraceProcesses processes_;
  Timeline timeline_;
  std::map<int64_t, size_t> process_tracks_;
  std::map<std::tuple<int64_t, int64_t, TimelineTrack::Kind>, size_t> thread_tracks_;
  std::map<std::tuple<int64_t, std::optional<int64_t>, std::optional<int64_t>>, size_t> stream_tracks_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;
  std::unordered_map<int64_t, size_t> call_slices_;
  std::unordered_map<std::string, uint32_t> name_ids_;
  std::map<std::pair<GpuOp, int64_t>, size_t> gpu_slices_;
};

}  // namespace

Timeline build_timeline(Database& db, Progress& progress) {
  return TimelineBuilder(db, progress).build();
}

}  // namespace apptracer
