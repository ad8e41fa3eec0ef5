#include "timeline.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "analyzer/trace/trace.h"
#include "apptracer/enums.h"
#include "dvdg_flows.h"

namespace apptracer {

namespace {

std::string optional_text(std::optional<int64_t> value) {
  return value ? std::to_string(*value) : std::string("?");
}

// Flow ids: a call -> GPU work flow is named by its GPU operation (kind in the
// low two bits, 1 to 3), a DVDG flow by its number (low bits 0), so both ends
// of a flow compute the same id without remembering anything.
uint64_t call_flow_id(GpuOp kind, int64_t id) {
  return (static_cast<uint64_t>(id) << 2) | (static_cast<uint64_t>(kind) + 1);
}
uint64_t dvdg_flow_id(uint64_t number) { return number << 2; }

bool has_index_on(Database& db, const std::string& table, const std::string& column) {
  Statement indexes = db.prepare("SELECT name FROM pragma_index_list(?)");
  indexes.bind(1, table);
  while (indexes.step()) {
    Statement columns = db.prepare("SELECT name FROM pragma_index_info(?) WHERE seqno = 0");
    columns.bind(1, indexes.text(0));
    if (columns.step() && columns.text(0) == column) return true;
  }
  return false;
}

// The three joins a slice needs beyond its own row, one indexed lookup each.
// A trace cut short has no indexes (the tracer builds them last); then the
// rows the lookups need are first copied into indexed temporary tables
// (SQLite keeps them in a temporary file, not in memory).
class Lookups {
 public:
  explicit Lookups(Database& db) : db_(db) {
    std::string calls = "SELECT a.rowid AS call_row, a.correlation_id, a.start_ns FROM api_calls a "
                        "JOIN strings s ON s.id = a.name_id";
    if (!has_index_on(db, "api_calls", "correlation_id")) {
      calls = temporary_table("apptracer_calls", calls, "correlation_id");
    }
    // min() picks the first call without sorting (SQLite returns the row
    // holding the minimum).
    first_call_ = db.prepare("SELECT call_row, min(start_ns) FROM (" + calls +
                             ") WHERE correlation_id = ?1");

    std::string work;
    bool indexed = true;
    for (auto [kind, table] : {std::pair{GpuOp::Kernel, "kernels"}, std::pair{GpuOp::Copy, "memcpys"},
                               std::pair{GpuOp::Memset, "memsets"}}) {
      work += std::string(work.empty() ? "" : " UNION ALL ") + "SELECT " +
              std::to_string(static_cast<int>(kind)) + " AS kind, id, call_correlation_id FROM " +
              table + " WHERE gpu_start_ns IS NOT NULL AND gpu_end_ns IS NOT NULL";
      indexed = indexed && has_index_on(db, table, "call_correlation_id");
    }
    if (!indexed) work = temporary_table("apptracer_gpu_work", work, "call_correlation_id");
    gpu_work_ = db.prepare("SELECT kind, id FROM (" + work + ") WHERE call_correlation_id = ?1");

    // kernel_args is a view over kernel_arg_words (schema 3) or a table (2).
    bool view = !db.has_table("kernel_args");
    std::string used = "SELECT ka.kernel_id, al.id AS alloc_id, al.kind, al.bytes, ka.access, "
                       "ka.offset FROM kernel_args ka JOIN allocations al ON al.id = ka.alloc_id";
    if (!(view ? has_index_on(db, "kernel_arg_words", "arg_set_id")
               : has_index_on(db, "kernel_args", "kernel_id"))) {
      used = temporary_table("apptracer_kernel_allocations", used, "kernel_id");
    }
    kernel_allocations_ = db.prepare("SELECT alloc_id, kind, bytes, access, offset FROM (" + used +
                                     ") WHERE kernel_id = ?1");
  }

  // The rowid of the first call (by start) with this correlation id.
  std::optional<int64_t> first_call(std::optional<int64_t> correlation_id) {
    if (!correlation_id) return std::nullopt;
    first_call_.bind(1, *correlation_id);
    std::optional<int64_t> row;
    if (first_call_.step() && !first_call_.is_null(0)) row = first_call_.int64(0);
    first_call_.reset();
    return row;
  }

  // The flows from a call to the timed GPU work it issued.
  std::vector<uint64_t> gpu_work(int64_t correlation_id) {
    std::vector<uint64_t> flows;
    gpu_work_.bind(1, correlation_id);
    while (gpu_work_.step()) {
      flows.push_back(call_flow_id(static_cast<GpuOp>(gpu_work_.int64(0)), gpu_work_.int64(1)));
    }
    gpu_work_.reset();
    return flows;
  }

  // "#12 device 4096 B rw; #13 pinned host 64 B r" for every allocation a kernel's arguments
  // point into (once, however many words point into it): the link from GPU
  // work to the memory it used.
  // (A launch has a few words: they are grouped here rather than by SQL,
  // whose GROUP BY and ORDER BY would build two temporary trees per launch.)
  std::string kernel_allocations(int64_t kernel_id) {
    struct Use {
      int64_t offset, alloc_id, kind, bytes, access;
    };
    std::vector<Use> uses;
    kernel_allocations_.bind(1, kernel_id);
    while (kernel_allocations_.step()) {
      Use use{kernel_allocations_.int64(4), kernel_allocations_.int64(0),
              kernel_allocations_.int64(1), kernel_allocations_.int64(2),
              kernel_allocations_.int64(3)};
      auto same = std::find_if(uses.begin(), uses.end(), [&](const Use& u) {
        return u.alloc_id == use.alloc_id && u.access == use.access;
      });
      if (same == uses.end()) {
        uses.push_back(use);
      } else {
        same->offset = std::min(same->offset, use.offset);
      }
    }
    kernel_allocations_.reset();
    std::stable_sort(uses.begin(), uses.end(),
                     [](const Use& a, const Use& b) { return a.offset < b.offset; });
    std::string text;
    for (const Use& use : uses) {
      if (!text.empty()) text += "; ";
      text += "#" + std::to_string(use.alloc_id) + " " +
              std::string(to_string(static_cast<AllocKind>(use.kind))) + " " +
              std::to_string(use.bytes) + " B " +
              std::string(to_string(static_cast<AccessKind>(use.access)));
    }
    return text;
  }

 private:
  std::string temporary_table(const std::string& name, const std::string& select,
                              const std::string& key) {
    db_.exec("DROP TABLE IF EXISTS temp." + name + "; CREATE TEMP TABLE " + name + " AS " + select +
             "; CREATE INDEX temp." + name + "_key ON " + name + "(" + key + ")");
    return "SELECT * FROM temp." + name;
  }

  Database& db_;
  Statement first_call_;
  Statement gpu_work_;
  Statement kernel_allocations_;
};

// Flows along DVDG edges, looked up by the GPU operation at either end.
class DvdgFlowIndex {
 public:
  // Only flows between two different operations that are both on the
  // timeline (have GPU times) are drawn.
  explicit DvdgFlowIndex(Database& db) {
    std::vector<DvdgFlow> flows = read_dvdg_flows(db);
    if (flows.empty()) return;
    Statement timed[] = {db.prepare(timed_sql("kernels")), db.prepare(timed_sql("memcpys")),
                         db.prepare(timed_sql("memsets"))};
    auto on_timeline = [&](GpuOp kind, int64_t id) {
      Statement& query = timed[static_cast<int>(kind)];
      query.bind(1, id);
      bool found = query.step();
      query.reset();
      return found;
    };
    for (const DvdgFlow& flow : flows) {
      if (std::pair{flow.from_kind, flow.from_id} == std::pair{flow.to_kind, flow.to_id} ||
          !on_timeline(flow.from_kind, flow.from_id) || !on_timeline(flow.to_kind, flow.to_id)) {
        continue;
      }
      uint64_t id = dvdg_flow_id(++count_);
      out_.push_back({{flow.from_kind, flow.from_id}, id});
      in_.push_back({{flow.to_kind, flow.to_id}, id});
    }
    std::sort(out_.begin(), out_.end());
    std::sort(in_.begin(), in_.end());
  }

  size_t count() const { return count_; }
  void append_out(GpuOp kind, int64_t id, std::vector<uint64_t>& flows) const {
    append(out_, kind, id, flows);
  }
  void append_in(GpuOp kind, int64_t id, std::vector<uint64_t>& flows) const {
    append(in_, kind, id, flows);
  }

 private:
  using Entry = std::pair<std::pair<GpuOp, int64_t>, uint64_t>;

  static std::string timed_sql(const char* table) {
    return std::string("SELECT 1 FROM ") + table +
           " WHERE id = ?1 AND gpu_start_ns IS NOT NULL AND gpu_end_ns IS NOT NULL";
  }

  static void append(const std::vector<Entry>& entries, GpuOp kind, int64_t id,
                     std::vector<uint64_t>& flows) {
    auto first = std::lower_bound(entries.begin(), entries.end(), Entry{{kind, id}, 0});
    for (auto it = first; it != entries.end() && it->first == std::pair{kind, id}; ++it) {
      flows.push_back(it->second);
    }
  }

  std::vector<Entry> out_;
  std::vector<Entry> in_;
  size_t count_ = 0;
};

// One table's slices, in start order, a row at a time.
struct SliceSource {
  Statement rows;
  std::function<TimelineSlice(Statement&)> make;
  int start_column = 0;  // the slice's start and (clamped) end in each row
  int end_column = 0;
  bool has_row = false;

  void next() { has_row = rows.step(); }
  int64_t start() const { return rows.int64(start_column); }
  int64_t end() const { return rows.int64(end_column); }
};

class TimelineReader {
 public:
  TimelineReader(Database& db, TimelineSink& sink, Progress& progress)
      : db_(db),
        sink_(sink),
        progress_(progress),
        processes_(trace::Trace(db).processes()),
        lookups_(db),
        dvdg_(db) {}

  TimelineCounts read() {
    for (const trace::TraceProcess& process : processes_.list) process_track(process.process_id);
    read_thread_names();
    std::vector<SliceSource> sources;
    sources.push_back(api_calls());
    sources.push_back(kernels());
    sources.push_back(copies());
    sources.push_back(memsets());
    sources.push_back(nvtx_ranges());
    int64_t total = 0;
    for (const char* table : {"api_calls", "kernels", "memcpys", "memsets", "nvtx_ranges"}) {
      total += row_count(table);
    }
    for (SliceSource& source : sources) source.next();
    // Merges the tables' slices by start, longer first, then table order.
    for (;;) {
      SliceSource* next = nullptr;
      for (SliceSource& source : sources) {
        if (!source.has_row) continue;
        if (!next || source.start() < next->start() ||
            (source.start() == next->start() && source.end() > next->end())) {
          next = &source;
        }
      }
      if (!next) break;
      sink_.slice(next->make(next->rows));
      next->next();
      if (++counts_.slices % 4096 == 0) {
        progress_.update("slices", static_cast<int64_t>(counts_.slices), total);
      }
    }
    sink_.finish();
    progress_.finish();
    counts_.tracks = tracks_.size();
    counts_.dvdg_flows = dvdg_.count();
    counts_.flows = counts_.api_flows + counts_.dvdg_flows;
    return counts_;
  }

 private:
  std::string process_column(const char* alias = "") const {
    return processes_.merged ? std::string(alias) + "process_id" : "1";
  }

  int64_t row_count(const std::string& table) {
    Statement count = db_.prepare("SELECT count(*) FROM " + table);
    count.step();
    return count.int64(0);
  }

  size_t add_track(TimelineTrack track) {
    track.uuid = tracks_.size() + 1;
    tracks_.push_back(track);
    sink_.track(tracks_.back());
    return tracks_.size() - 1;
  }

  size_t process_track(int64_t process_id) {
    auto found = process_tracks_.find(process_id);
    if (found != process_tracks_.end()) return found->second;
    const trace::TraceProcess& process = processes_.get(process_id);
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
    const TimelineTrack& process = tracks_[process_track(process_id)];
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
    const TimelineTrack& process = tracks_[process_track(process_id)];
    TimelineTrack track;
    track.kind = TimelineTrack::Kind::Stream;
    track.parent_uuid = process.uuid;
    track.pid = process.pid;
    track.name = "GPU " + optional_text(device) + " stream " + optional_text(stream);
    size_t index = add_track(std::move(track));
    stream_tracks_.emplace(key, index);
    return index;
  }

  void read_thread_names() {
    Statement rows = db_.prepare("SELECT " + process_column() + ", tid, name FROM threads");
    while (rows.step()) thread_names_[{rows.int64(0), rows.int64(1)}] = rows.text(2);
  }

  // A GPU operation's flows: from the call that issued it, and along DVDG edges.
  void add_gpu_flows(TimelineSlice& slice, GpuOp kind, int64_t id,
                     std::optional<int64_t> correlation_id) {
    if (lookups_.first_call(correlation_id)) {
      slice.flows_in.push_back(call_flow_id(kind, id));
      ++counts_.api_flows;
    }
    dvdg_.append_in(kind, id, slice.flows_in);
    dvdg_.append_out(kind, id, slice.flows_out);
  }

  SliceSource api_calls() {
    SliceSource source;
    source.rows = db_.prepare(
        "SELECT " + process_column("a.") + ", a.correlation_id, a.domain, s.text, a.tid, "
        "a.start_ns, max(a.end_ns, a.start_ns) AS end_ns, a.return_code, a.rowid, " +
        std::string(db_.has_column("api_calls", "driver_name_id")
                        ? "(SELECT text FROM strings WHERE id = a.driver_name_id) "
                        : "NULL ") +
        "FROM api_calls a JOIN strings s ON s.id = a.name_id "
        "ORDER BY a.start_ns, 7 DESC, a.rowid");
    source.start_column = 5;
    source.end_column = 6;
    source.make = [this](Statement& rows) {
      TimelineSlice slice;
      slice.track = thread_track(rows.int64(0), rows.int64(4), TimelineTrack::Kind::Thread);
      slice.start_ns = rows.int64(5);
      slice.end_ns = rows.int64(6);
      slice.name = rows.text(3);
      slice.category = "cuda_api";
      int64_t correlation_id = rows.int64(1);
      slice.args.push_back({"correlation_id", correlation_id});
      slice.args.push_back(
          {"domain", std::string(to_string(static_cast<ApiDomain>(rows.int64(2))))});
      if (rows.int64(7) != 0) slice.args.push_back({"return_code", rows.int64(7)});
      if (!rows.is_null(9)) slice.args.push_back({"driver_call", rows.text(9)});
      // The outermost call of a correlation id draws the flows to its GPU work.
      slice.flows_out = lookups_.gpu_work(correlation_id);
      if (!slice.flows_out.empty() && lookups_.first_call(correlation_id) != rows.int64(8)) {
        slice.flows_out.clear();
      }
      return slice;
    };
    return source;
  }

  // The columns every GPU operation's query ends with: start, clamped end.
  static std::string gpu_times(const char* alias) {
    std::string a = alias;
    return a + "gpu_start_ns, max(" + a + "gpu_end_ns, " + a + "gpu_start_ns) AS end_ns";
  }
  static std::string timed_in_order(const char* alias, int end_column) {
    std::string a = alias;
    return " WHERE " + a + "gpu_start_ns IS NOT NULL AND " + a + "gpu_end_ns IS NOT NULL ORDER BY " +
           a + "gpu_start_ns, " + std::to_string(end_column + 1) + " DESC, " + a + "id";
  }

  SliceSource kernels() {
    SliceSource source;
    source.rows = db_.prepare(
        "SELECT " + process_column("k.") + ", k.id, k.call_correlation_id, "
        "COALESCE(d.text, m.text, '?'), k.device, k.stream, k.grid_x, k.grid_y, k.grid_z, "
        "k.block_x, k.block_y, k.block_z, " + gpu_times("k.") +
        " FROM kernels k LEFT JOIN strings d ON d.id = k.demangled_id "
        "LEFT JOIN strings m ON m.id = k.name_id" + timed_in_order("k.", 13));
    source.start_column = 12;
    source.end_column = 13;
    source.make = [this](Statement& rows) {
      TimelineSlice slice;
      slice.track = stream_track(rows.int64(0), rows.optional_int64(4), rows.optional_int64(5));
      slice.start_ns = rows.int64(12);
      slice.end_ns = rows.int64(13);
      slice.name = rows.text(3);
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
      std::string used = lookups_.kernel_allocations(kernel_id);
      if (!used.empty()) slice.args.push_back({"allocations", std::move(used)});
      add_gpu_flows(slice, GpuOp::Kernel, kernel_id, rows.optional_int64(2));
      return slice;
    };
    return source;
  }

  SliceSource copies() {
    SliceSource source;
    source.rows = db_.prepare(
        "SELECT " + process_column() + ", id, call_correlation_id, kind, bytes, src_alloc_id, "
        "dst_alloc_id, src_memory, dst_memory, COALESCE(dst_device, src_device), stream, " +
        gpu_times("") + " FROM memcpys" + timed_in_order("", 12));
    source.start_column = 11;
    source.end_column = 12;
    source.make = [this](Statement& rows) {
      TimelineSlice slice;
      slice.track = stream_track(rows.int64(0), rows.optional_int64(9), rows.optional_int64(10));
      slice.start_ns = rows.int64(11);
      slice.end_ns = rows.int64(12);
      slice.name = "memcpy " + std::string(to_string(static_cast<CopyKind>(rows.int64(3))));
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
      add_gpu_flows(slice, GpuOp::Copy, copy_id, rows.optional_int64(2));
      return slice;
    };
    return source;
  }

  SliceSource memsets() {
    SliceSource source;
    source.rows = db_.prepare(
        "SELECT " + process_column() + ", id, call_correlation_id, bytes, value, alloc_id, memory, "
        "device, stream, " + gpu_times("") + " FROM memsets" + timed_in_order("", 10));
    source.start_column = 9;
    source.end_column = 10;
    source.make = [this](Statement& rows) {
      TimelineSlice slice;
      slice.track = stream_track(rows.int64(0), rows.optional_int64(7), rows.optional_int64(8));
      slice.start_ns = rows.int64(9);
      slice.end_ns = rows.int64(10);
      slice.name = "memset";
      slice.category = "memset";
      int64_t memset_id = rows.int64(1);
      slice.args.push_back({"memset_id", memset_id});
      if (!rows.is_null(2)) slice.args.push_back({"correlation_id", rows.int64(2)});
      slice.args.push_back({"bytes", rows.int64(3)});
      slice.args.push_back({"value", rows.int64(4)});
      slice.args.push_back({"memory", std::string(to_string(static_cast<MemoryKind>(rows.int64(6))))});
      if (!rows.is_null(5)) slice.args.push_back({"allocation", rows.int64(5)});
      add_gpu_flows(slice, GpuOp::Memset, memset_id, rows.optional_int64(2));
      return slice;
    };
    return source;
  }

  // The last end of every call and timed GPU operation: where an NVTX range
  // still open when the trace ended is drawn to.
  int64_t trace_end() {
    Statement last = db_.prepare(
        "SELECT max(e) FROM (SELECT max(max(a.end_ns, a.start_ns)) AS e FROM api_calls a "
        "JOIN strings s ON s.id = a.name_id "
        "UNION ALL SELECT max(max(gpu_end_ns, gpu_start_ns)) FROM kernels "
        "WHERE gpu_start_ns IS NOT NULL AND gpu_end_ns IS NOT NULL "
        "UNION ALL SELECT max(max(gpu_end_ns, gpu_start_ns)) FROM memcpys "
        "WHERE gpu_start_ns IS NOT NULL AND gpu_end_ns IS NOT NULL "
        "UNION ALL SELECT max(max(gpu_end_ns, gpu_start_ns)) FROM memsets "
        "WHERE gpu_start_ns IS NOT NULL AND gpu_end_ns IS NOT NULL)");
    return last.step() ? std::max<int64_t>(0, last.optional_int64(0).value_or(0)) : 0;
  }

  SliceSource nvtx_ranges() {
    SliceSource source;
    source.rows = db_.prepare(
        "SELECT " + process_column("n.") + ", n.tid, COALESCE(s.text, '?'), n.start_ns, "
        "max(COALESCE(n.end_ns, ?1), n.start_ns) AS end_ns, n.end_ns IS NULL "
        "FROM nvtx_ranges n LEFT JOIN strings s ON s.id = n.name_id "
        "ORDER BY n.start_ns, 5 DESC, n.rowid");
    source.rows.bind(1, trace_end());
    source.start_column = 3;
    source.end_column = 4;
    source.make = [this](Statement& rows) {
      TimelineSlice slice;
      slice.track = thread_track(rows.int64(0), rows.int64(1), TimelineTrack::Kind::Nvtx);
      slice.start_ns = rows.int64(3);
      slice.end_ns = rows.int64(4);
      slice.name = rows.text(2);
      slice.category = "nvtx";
      if (rows.int64(5) != 0) slice.args.push_back({"unclosed", int64_t{1}});
      return slice;
    };
    return source;
  }

  Database& db_;
  TimelineSink& sink_;
  Progress& progress_;
  trace::TraceProcesses processes_;
  Lookups lookups_;
  DvdgFlowIndex dvdg_;
  TimelineCounts counts_;
  std::vector<TimelineTrack> tracks_;
  std::map<int64_t, size_t> process_tracks_;
  std::map<std::tuple<int64_t, int64_t, TimelineTrack::Kind>, size_t> thread_tracks_;
  std::map<std::tuple<int64_t, std::optional<int64_t>, std::optional<int64_t>>, size_t> stream_tracks_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;
};

class CollectingSink : public TimelineSink {
 public:
  explicit CollectingSink(Timeline& timeline) : timeline_(timeline) {}
  void track(const TimelineTrack& track) override { timeline_.tracks.push_back(track); }
  void slice(const TimelineSlice& slice) override { timeline_.slices.push_back(slice); }
  void finish() override {}

 private:
  Timeline& timeline_;
};

}  // namespace

TimelineCounts stream_timeline(Database& db, TimelineSink& sink, Progress& progress) {
  return TimelineReader(db, sink, progress).read();
}

Timeline build_timeline(Database& db, Progress& progress) {
  Timeline timeline;
  CollectingSink sink(timeline);
  TimelineCounts counts = stream_timeline(db, sink, progress);
  timeline.flow_count = counts.flows;
  timeline.api_flow_count = counts.api_flows;
  timeline.dvdg_flow_count = counts.dvdg_flows;
  return timeline;
}

void replay_timeline(const Timeline& timeline, TimelineSink& sink) {
  for (const TimelineTrack& track : timeline.tracks) sink.track(track);
  for (const TimelineSlice& slice : timeline.slices) sink.slice(slice);
  sink.finish();
}

}  // namespace apptracer
