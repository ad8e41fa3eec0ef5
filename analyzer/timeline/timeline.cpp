#include "analyzer/timeline/timeline.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "analyzer/trace/operations.h"
#include "apptracer/enums.h"
#include "analyzer/dvdg/op_accesses.h"
#include "analyzer/memory/memory_model.h"
#include "analyzer/memory/owner_series.h"
#include "analyzer/timeline/dvdg_flows.h"
#include "analyzer/timeline/span_tree.h"
#include "analyzer/trace/memory_series.h"

namespace apptracer {

namespace {

using trace::NullableInt;
using trace::Packed;

void append_number(std::string& text, int64_t value) {
  char digits[24];
  text.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
}

std::string optional_text(NullableInt value) {
  return value ? std::to_string(*value) : std::string("?");
}

// Kineto's name of a memory kind: "Pageable", "Device Static".
std::string memory_name(MemoryKind kind) {
  std::string name(to_string(kind));
  for (size_t i = 0; i < name.size(); ++i) {
    if (i == 0 || name[i - 1] == ' ')
      name[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[i])));
  }
  return name;
}

// Kineto's name of a copy: "Memcpy HtoD (Pageable -> Device)".
std::string copy_name(const Packed<MemcpyRow>& copy) {
  return "Memcpy " + std::string(to_string(copy.kind)) + " (" + memory_name(copy.src_memory) + " -> " +
         memory_name(copy.dst_memory) + ")";
}

// Kineto's "grid" and "block": written only when every dimension is known.
void add_dims(std::vector<TimelineArg>& args, std::string_view name, NullableInt x, NullableInt y,
              NullableInt z) {
  if (x && y && z) args.push_back({name, Dim3{*x, *y, *z}});
}

// Kineto's bandwidth of a copy or memset: bytes per nanosecond is GB/s.
void add_bandwidth(std::vector<TimelineArg>& args, int64_t bytes, int64_t start, int64_t end) {
  args.push_back({"bytes", bytes});
  if (end > start)
    args.push_back({"memory bandwidth (GB/s)", static_cast<double>(bytes) / (end - start)});
}

// The arguments Kineto gives every GPU operation: its stream, device and the
// correlation id of the call that issued it, which is also its "External id"
// (the id that ties Kineto's events of one operation together).
void add_gpu_ids(std::vector<TimelineArg>& args, NullableInt device, NullableInt stream,
                 NullableInt correlation) {
  if (device) args.push_back({"device", *device});
  if (stream) args.push_back({"stream", *stream});
  if (correlation) {
    args.push_back({"correlation", *correlation});
    args.push_back({"External id", *correlation});
  }
}

// A text argument copied from `text`, which the trace stores or a literal
// holds: keyed by its address (TimelineArg::value_key).
TimelineArg stored_text_arg(std::string_view name, std::string_view text) {
  return {name, std::string(text), text.data()};
}

// The PyTorch module and op that issued a GPU operation, where the trace
// knows them (framework_context.h).
void add_framework_context(std::vector<TimelineArg>& args, trace::Trace& trace,
                           const trace::FrameworkContexts& contexts, trace::ProcessId process,
                           NullableInt correlation) {
  if (!contexts.recorded()) return;
  trace::FrameworkContext context = contexts.of_call(process, correlation);
  if (context.module_id) {
    args.push_back(stored_text_arg("module", trace.string(context.module_id)));
    args.push_back(stored_text_arg("module_phase", trace::to_string(context.phase)));
  }
  if (context.op_id) args.push_back(stored_text_arg("op", trace.string(context.op_id)));
}

// A trace of one process that held a rank: that rank.
std::optional<TimelineRank> job_rank(trace::Trace& trace) {
  if (trace.processes().merged) return std::nullopt;
  std::map<int64_t, TimelineRank> ranks = process_ranks(trace);
  if (ranks.empty()) return std::nullopt;
  return ranks.begin()->second;
}

TimelineSource timeline_source(trace::Trace& trace) {
  TimelineSource source;
  for (const Packed<DeviceRow>& row : trace.rows<DeviceRow>()) {
    source.devices.push_back({row.id, row.process, std::string(trace.text(row.name)), row.cc_major,
                              row.cc_minor, row.total_memory_bytes, row.sm_count});
  }
  source.rank = job_rank(trace);
  return source;
}

// Flow ids: a call -> GPU work flow is named by its GPU operation (kind in the
// low two bits, 1 to 3), a DVDG flow by its number (low bits 0), so both ends
// of a flow compute the same id without remembering anything.
uint64_t call_flow_id(GpuOp kind, int64_t id) {
  return (static_cast<uint64_t>(id) << 2) | (static_cast<uint64_t>(kind) + 1);
}
uint64_t dvdg_flow_id(uint64_t number) { return number << 2; }

bool timed(NullableInt start, NullableInt end) { return start && end; }

// A GPU operation's GPU start and end, the end never before the start.
template <typename Row>
std::pair<int64_t, int64_t> gpu_times(const Packed<Row>& row) {
  return {*row.gpu_start_ns, std::max(*row.gpu_end_ns, *row.gpu_start_ns)};
}

// Kineto's gpu_user_annotation: each NVTX range drawn on every GPU stream
// that ran work its thread issued inside it, from the first such work's start
// to the last one's end. Made before the slices (a few integers per call and
// GPU operation, only in a trace with NVTX ranges), held by start.
class GpuAnnotations {
 public:
  struct Annotation {
    int64_t start, end;  // on the trace's clock
    trace::ProcessId process;
    NullableInt device, stream;
    NullableInt name_id;
  };

  // Reads the NVTX ranges; the calls and GPU work are handed in as the
  // timeline's lookups read them (one pass over each table), then finish.
  explicit GpuAnnotations(trace::Trace& trace) {
    trace.stream<NvtxRangeRow>("", [&](const Packed<NvtxRangeRow>& range) { ranges_.push_back(range); });
  }

  // Whether the trace has NVTX ranges to draw on streams.
  bool wanted() const { return !ranges_.empty(); }
  void see_call(const Packed<ApiCallRow>& call) {
    calls_.push_back({call.process, call.tid, call.start_ns, call.correlation_id});
  }
  // Timed GPU work the call with `correlation` issued.
  void see_work(int64_t correlation, NullableInt device, NullableInt stream, std::pair<int64_t, int64_t> times) {
    work_.push_back({correlation, device, stream, times.first, times.second});
  }
  // Places each range on the streams; `last_ns` ends ranges still open.
  void finish(int64_t last_ns) {
    if (!wanted()) return;
    std::sort(calls_.begin(), calls_.end());
    std::sort(work_.begin(), work_.end());
    index_streams();
    for (const Packed<NvtxRangeRow>& range : ranges_) {
      if (range.tid) add(range, range.end_ns.value_or(last_ns));
    }
    std::vector<Packed<NvtxRangeRow>>().swap(ranges_);
    std::sort(annotations_.begin(), annotations_.end(), [](const Annotation& a, const Annotation& b) {
      return std::tie(a.start, b.end) < std::tie(b.start, a.end);
    });
  }

  const std::vector<Annotation>& list() const { return annotations_; }

 private:
  struct Call {
    trace::ProcessId process;
    int64_t tid, start, correlation;
    bool operator<(const Call& o) const {
      return std::tie(process, tid, start, correlation) <
             std::tie(o.process, o.tid, o.start, o.correlation);
    }
  };
  struct Work {
    int64_t correlation;
    NullableInt device, stream;
    int64_t start, end;
    bool operator<(const Work& o) const {
      return std::tie(correlation, device, stream, start) <
             std::tie(o.correlation, o.device, o.stream, o.start);
    }
  };
  using Thread = std::pair<trace::ProcessId, int64_t>;
  using Where = std::pair<NullableInt, NullableInt>;  // device, stream
  // A thread's calls that issued work on one stream (indexes into calls_,
  // ascending) and the span of each one's work there.
  struct StreamCalls {
    std::vector<size_t> calls;
    SpanTree spans;
  };

  // What `call` issued: a run of work_, by stream.
  std::pair<std::vector<Work>::const_iterator, std::vector<Work>::const_iterator> work_of(
      const Call& call) const {
    auto first = std::lower_bound(work_.begin(), work_.end(),
                                  Work{call.correlation, NullableInt(), NullableInt(), INT64_MIN, 0});
    auto last = first;
    while (last != work_.end() && last->correlation == call.correlation) ++last;
    return {first, last};
  }

  // For each thread and stream, the calls that issued work there, so a range
  // finds its span on a stream without visiting the calls inside it: nested
  // ranges would visit each call once per level.
  void index_streams() {
    std::map<Thread, std::map<Where, std::pair<std::vector<size_t>, std::vector<SpanTree::Span>>>> found;
    for (size_t i = 0; i < calls_.size(); ++i) {
      auto [first, last] = work_of(calls_[i]);
      if (first == last) continue;
      auto& streams = found[{calls_[i].process, calls_[i].tid}];
      for (auto work = first; work != last; ++work) {
        auto& [calls, spans] = streams[{work->device, work->stream}];
        if (calls.empty() || calls.back() != i) {
          calls.push_back(i);
          spans.push_back(SpanTree::kNone);
        }
        spans.back() = {std::min(spans.back().first, work->start), std::max(spans.back().second, work->end)};
      }
    }
    for (auto& [thread, streams] : found) {
      std::map<Where, StreamCalls>& indexed = threads_[thread];
      for (auto& [where, calls_and_spans] : streams) {
        indexed.emplace(where, StreamCalls{std::move(calls_and_spans.first), SpanTree(calls_and_spans.second)});
      }
    }
  }

  // The range's span on each stream that ran work the calls inside it issued.
  void add(const Packed<NvtxRangeRow>& range, int64_t end) {
    auto thread = threads_.find({range.process, *range.tid});
    if (thread == threads_.end()) return;
    const std::map<Where, StreamCalls>& streams = thread->second;
    size_t from = static_cast<size_t>(
        std::lower_bound(calls_.begin(), calls_.end(), Call{range.process, *range.tid, range.start_ns, INT64_MIN}) -
        calls_.begin());
    auto last_inside = std::make_tuple(range.process, *range.tid, end);
    size_t to = static_cast<size_t>(
        std::partition_point(calls_.begin() + static_cast<std::ptrdiff_t>(from), calls_.end(),
                             [&](const Call& call) {
                               return std::tie(call.process, call.tid, call.start) <= last_inside;
                             }) -
        calls_.begin());
    if (to <= from) return;
    std::map<Where, SpanTree::Span> spans;
    if (to - from <= streams.size()) {
      // Fewer calls than streams: visiting the calls costs less.
      for (size_t i = from; i < to; ++i) {
        auto [first, last] = work_of(calls_[i]);
        for (auto work = first; work != last; ++work) {
          auto [span, added] = spans.try_emplace({work->device, work->stream}, work->start, work->end);
          span->second = {std::min(span->second.first, work->start), std::max(span->second.second, work->end)};
        }
      }
    } else {
      for (const auto& [where, stream] : streams) {
        size_t first = static_cast<size_t>(std::lower_bound(stream.calls.begin(), stream.calls.end(), from) -
                                           stream.calls.begin());
        size_t last = static_cast<size_t>(std::lower_bound(stream.calls.begin(), stream.calls.end(), to) -
                                          stream.calls.begin());
        if (first < last) spans.emplace(where, stream.spans.span(first, last));
      }
    }
    for (const auto& [where, span] : spans)
      annotations_.push_back(
          {span.first, span.second, range.process, where.first, where.second, range.name_id});
  }

  std::vector<Packed<NvtxRangeRow>> ranges_;  // until finish
  std::vector<Call> calls_;  // by thread, then start
  std::vector<Work> work_;   // by correlation
  std::map<Thread, std::map<Where, StreamCalls>> threads_;
  std::vector<Annotation> annotations_;
};

// What a slice needs beyond its own row, read once before the slices: the
// first call (by start) of each correlation id, the timed GPU work each call
// issued, and what each launch's arguments point into. Small beside the
// trace (a few integers per row): the slices themselves are streamed.
class Lookups {
 public:
  // Hands `annotations` the calls and GPU work as they are read, and
  // finishes it.
  Lookups(trace::Trace& trace, GpuAnnotations& annotations) : trace_(trace), words_(trace) {
    // A call without a name in strings has no slice, as before.
    std::vector<std::tuple<int64_t, int64_t, int64_t>> calls;  // (correlation, start, row)
    bool annotate = annotations.wanted();
    // The columns this pass reads of the two largest tables; their slices read the rest.
    trace.stream_columns<ApiCallRow>({"id", "correlation_id", "tid", "start_ns", "end_ns", "name_id"}, "",
                                     [&](const Packed<ApiCallRow>& call) {
      if (annotate) annotations.see_call(call);
      if (!trace.find<StringRow>(call.name_id)) return;
      calls.emplace_back(call.correlation_id, call.start_ns, call.id);
      last_ns_ = std::max(last_ns_, std::max(call.end_ns, call.start_ns));
      ++rows_;
    });
    std::sort(calls.begin(), calls.end());
    for (const auto& [correlation, start, row] : calls) {
      if (first_calls_.empty() || first_calls_.back().first != correlation)
        first_calls_.emplace_back(correlation, row);
    }
    GpuAnnotations* annotating = annotate ? &annotations : nullptr;
    add_work<KernelRow>(GpuOp::Kernel, annotating, [](const Packed<KernelRow>& row) { return row.device; },
                        {"id", "call_correlation_id", "device", "stream", "gpu_start_ns", "gpu_end_ns"});
    add_work<MemcpyRow>(GpuOp::Copy, annotating, trace::copy_device, {});
    add_work<MemsetRow>(GpuOp::Memset, annotating, [](const Packed<MemsetRow>& row) { return row.device; }, {});
    std::sort(work_.begin(), work_.end());
    for (std::vector<int64_t>& ids : timed_) std::sort(ids.begin(), ids.end());
    annotations.finish(last_ns());
  }

  // Rows of the tables that become slices (but NVTX ranges), for progress.
  int64_t rows() const { return rows_; }
  // The last end of every call and timed GPU operation: where an NVTX range
  // still open when the trace ended is drawn to.
  int64_t last_ns() const { return std::max<int64_t>(0, last_ns_); }

  // The row id of the first call (by start) with this correlation id.
  std::optional<int64_t> first_call(NullableInt correlation) const {
    if (!correlation) return std::nullopt;
    auto found = std::lower_bound(first_calls_.begin(), first_calls_.end(),
                                  std::make_pair(*correlation, INT64_MIN));
    if (found == first_calls_.end() || found->first != *correlation) return std::nullopt;
    return found->second;
  }

  // Appends the flows from a call to the timed GPU work it issued.
  void append_gpu_work(int64_t correlation, std::vector<uint64_t>& flows) const {
    auto it = std::lower_bound(work_.begin(), work_.end(),
                               std::make_tuple(correlation, GpuOp::Kernel, INT64_MIN));
    for (; it != work_.end() && std::get<0>(*it) == correlation; ++it)
      flows.push_back(call_flow_id(std::get<1>(*it), std::get<2>(*it)));
  }

  // Whether the GPU operation has GPU times (is on the timeline).
  bool on_timeline(GpuOp kind, int64_t id) const {
    const std::vector<int64_t>& ids = timed_[static_cast<int>(kind)];
    return std::binary_search(ids.begin(), ids.end(), id);
  }

  // "#12 device 4096 B rw; #13 pinned host 64 B r" for every allocation a kernel's arguments
  // point into (once per access, however many words point into it): the link
  // from GPU work to the memory it used.
  std::string kernel_allocations(const Packed<KernelRow>& kernel) {
    uses_.clear();
    for (const trace::KernelWord& word : words_.of(kernel)) {
      const Packed<AllocationRow>* allocation =
          word.alloc_id ? trace_.find<AllocationRow>(*word.alloc_id) : nullptr;
      if (!allocation) continue;
      auto same = std::find_if(uses_.begin(), uses_.end(), [&](const AllocationUse& u) {
        return u.allocation == allocation && u.access == word.access;
      });
      if (same == uses_.end()) {
        uses_.push_back({word.offset, allocation, word.access});
      } else {
        same->offset = std::min<int64_t>(same->offset, word.offset);
      }
    }
    std::stable_sort(uses_.begin(), uses_.end(),
                     [](const AllocationUse& a, const AllocationUse& b) { return a.offset < b.offset; });
    // Appended piece by piece: a million kernels' texts, no temporaries.
    std::string text;
    for (const AllocationUse& use : uses_) {
      if (!text.empty()) text += "; ";
      text += '#';
      append_number(text, use.allocation->id);
      text += ' ';
      text += to_string(use.allocation->kind);
      text += ' ';
      append_number(text, use.allocation->bytes);
      text += " B ";
      text += to_string(use.access);
    }
    return text;
  }

 private:
  // `columns`: those of Row's table `device` and this pass read; none: all.
  template <typename Row, typename Device>
  void add_work(GpuOp kind, GpuAnnotations* annotations, Device device, const ColumnNames& columns) {
    trace_.stream_columns<Row>(columns, "", [&](const Packed<Row>& row) {
      ++rows_;
      if (!timed(row.gpu_start_ns, row.gpu_end_ns)) return;
      last_ns_ = std::max(last_ns_, std::max(*row.gpu_end_ns, *row.gpu_start_ns));
      timed_[static_cast<int>(kind)].push_back(row.id);
      if (!row.call_correlation_id) return;
      work_.emplace_back(*row.call_correlation_id, kind, row.id);
      if (annotations) annotations->see_work(*row.call_correlation_id, device(row), row.stream, gpu_times(row));
    });
  }

  trace::Trace& trace_;
  // Read per launch as its slice is made: held, a trace whose launches
  // share no argument set would have all of them in memory.
  trace::KernelWordLookup words_;
  struct AllocationUse {
    int64_t offset;
    const Packed<AllocationRow>* allocation;
    AccessKind access;
  };
  std::vector<AllocationUse> uses_;  // kernel_allocations' list, kept for its capacity
  int64_t rows_ = 0;
  int64_t last_ns_ = 0;
  std::vector<std::pair<int64_t, int64_t>> first_calls_;         // (correlation, row), ascending
  std::vector<std::tuple<int64_t, GpuOp, int64_t>> work_;        // (correlation, kind, id), ascending
  std::vector<int64_t> timed_[3];                                // by GpuOp: ids, ascending
};

// Flows along DVDG edges, looked up by the GPU operation at either end.
class DvdgFlowIndex {
 public:
  // Only flows between two different operations that are both on the
  // timeline (have GPU times) are drawn.
  DvdgFlowIndex(const std::vector<DvdgFlow>& flows, const Lookups& lookups) {
    for (const DvdgFlow& flow : flows) {
      if (std::pair{flow.from_kind, flow.from_id} == std::pair{flow.to_kind, flow.to_id} ||
          !lookups.on_timeline(flow.from_kind, flow.from_id) ||
          !lookups.on_timeline(flow.to_kind, flow.to_id)) {
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
class SliceSource {
 public:
  virtual ~SliceSource() = default;
  // False at the end.
  virtual bool next() = 0;
  virtual int64_t start() const = 0;
  virtual int64_t end() const = 0;  // never before start
  // Makes the current row's slice in `slice`, whatever it held before: one
  // slice is made in place for every row, its strings' and lists' memory
  // reused, where making and freeing one per row (millions) was a tenth of
  // the timeline's time in the allocator.
  virtual void make(TimelineSlice& slice) = 0;
};

// The slices of Row's table: make(row, start, end, slice) makes the current row's.
// Event rows come within the trace's step window (read_ahead); the times of
// others (NVTX ranges) must overlap their process's part of it.
template <typename Row, typename Make, typename Times>
class TableSlices : public SliceSource {
 public:
  TableSlices(trace::Trace& trace, std::string_view order, Times times, Make make)
      : rows_(trace.read_ahead<Row>(order)), window_(trace.window()), times_(times), make_(make) {}

  bool next() override {
    while (rows_ && rows_->next(row_)) {
      std::tie(start_, end_) = times_(row_);
      if (!trace::kIsEventRow<Row> && window_ && !overlaps_window()) continue;
      return true;
    }
    return false;
  }
  int64_t start() const override { return start_; }
  int64_t end() const override { return end_; }
  void make(TimelineSlice& slice) override { make_(row_, start_, end_, slice); }

 private:
  bool overlaps_window() const {
    std::optional<std::pair<int64_t, int64_t>> span = window_->span(row_.process);
    return span && end_ >= span->first && start_ < span->second;
  }

  std::unique_ptr<trace::ReadAhead<Row>> rows_;
  const trace::StepWindow* window_;
  Packed<Row> row_;
  Times times_;
  Make make_;
  int64_t start_ = 0, end_ = 0;
};

// The slices of a list held in memory, by start: make(item, slice) makes an
// item's (it has a start and an end).
template <typename Item, typename Make>
class ListSlices : public SliceSource {
 public:
  ListSlices(const std::vector<Item>& items, Make make) : items_(items), make_(make) {}

  bool next() override { return ++next_ <= items_.size(); }
  int64_t start() const override { return items_[next_ - 1].start; }
  int64_t end() const override { return items_[next_ - 1].end; }
  void make(TimelineSlice& slice) override { make_(items_[next_ - 1], slice); }

 private:
  const std::vector<Item>& items_;
  Make make_;
  size_t next_ = 0;  // the current item + 1
};

template <typename Row, typename Times, typename Make>
std::unique_ptr<SliceSource> slices(trace::Trace& trace, std::string_view order, Times times,
                                    Make make) {
  return std::make_unique<TableSlices<Row, Make, Times>>(trace, order, times, make);
}

// Timed rows by start, the longer first, then by id.
constexpr const char* kTimedInOrder =
    "WHERE gpu_start_ns IS NOT NULL AND gpu_end_ns IS NOT NULL "
    "ORDER BY gpu_start_ns, max(gpu_end_ns, gpu_start_ns) DESC, id";

class TimelineReader {
 public:
  TimelineReader(trace::Trace& trace, TimelineSink& sink, Progress& progress, const TimelineContent& content)
      : trace_(trace),
        sink_(sink),
        progress_(progress),
        memory_owners_(content.memory_owners),
        gpu_annotations_(trace),
        lookups_(trace, gpu_annotations_),
        dvdg_origin_(has_stored_dvdg(trace)                         ? TimelineCounts::Dvdg::Stored
                     : content.dvdg == DvdgFlowSource::StoredOrBuilt ? TimelineCounts::Dvdg::Built
                                                                     : TimelineCounts::Dvdg::None),
        dvdg_(dvdg_origin_ == TimelineCounts::Dvdg::Built ? build_dvdg_flows(trace)
                                                          : read_dvdg_flows(trace),
              lookups_) {}

  TimelineCounts read() {
    sink_.source(timeline_source(trace_));
    for (const trace::TraceProcess& process : trace_.processes().list) process_track(process.process_id);
    read_counters();
    for (const Packed<ThreadRow>& thread : trace_.rows<ThreadRow>())
      thread_names_[{thread.process, thread.tid}] = std::string(trace_.text(thread.name));
    std::vector<std::unique_ptr<SliceSource>> sources;
    sources.push_back(api_calls());
    sources.push_back(kernels());
    sources.push_back(copies());
    sources.push_back(memsets());
    sources.push_back(nvtx_ranges());
    sources.push_back(gpu_annotations());
    int64_t total = lookups_.rows();
    std::vector<bool> has_row;
    for (auto& source : sources) has_row.push_back(source->next());
    // Merges the tables' slices by start, longer first, then table order.
    for (;;) {
      size_t next = sources.size();
      for (size_t i = 0; i < sources.size(); ++i) {
        if (!has_row[i]) continue;
        if (next == sources.size() || sources[i]->start() < sources[next]->start() ||
            (sources[i]->start() == sources[next]->start() && sources[i]->end() > sources[next]->end())) {
          next = i;
        }
      }
      if (next == sources.size()) break;
      counters_until(sources[next]->start());
      sources[next]->make(slice_);
      sink_.slice(slice_);
      has_row[next] = sources[next]->next();
      if (++counts_.slices % 4096 == 0) {
        progress_.update("slices", static_cast<int64_t>(counts_.slices), total);
      }
    }
    counters_until(INT64_MAX);
    sink_.finish();
    progress_.finish();
    counts_.tracks = tracks_.size();
    counts_.dvdg_flows = dvdg_.count();
    counts_.dvdg = dvdg_origin_;
    counts_.flows = counts_.api_flows + counts_.dvdg_flows;
    return counts_;
  }

 private:
  size_t add_track(TimelineTrack track) {
    track.uuid = tracks_.size() + 1;
    tracks_.push_back(track);
    sink_.track(tracks_.back());
    return tracks_.size() - 1;
  }

  size_t process_track(int64_t process_id) {
    auto found = process_tracks_.find(process_id);
    if (found != process_tracks_.end()) return found->second;
    const trace::TraceProcess& process = trace_.process(process_id);
    TimelineTrack track;
    track.kind = TimelineTrack::Kind::Process;
    track.process = process_id;
    track.name = process.name;
    track.pid = process.pid;
    size_t index = add_track(std::move(track));
    process_tracks_.emplace(process_id, index);
    return index;
  }

  // A counter track per series (and per owner of each device's memory when
  // asked), under its process; the values of all of them by time.
  void read_counters() {
    for (MemorySeries& series : read_memory_series(trace_)) {
      size_t index = counter_track(series.process, std::move(series.name));
      for (const auto& [ns, value] : series.points) counters_.push_back({index, ns, value});
    }
    if (memory_owners_) read_owner_counters();
    std::stable_sort(counters_.begin(), counters_.end(),
                     [](const TimelineCounter& a, const TimelineCounter& b) { return a.ns < b.ns; });
    if (trace_.window()) keep_window_counters();
  }

  // Within a step window, each counter's values inside its process's part of
  // it, starting from the value it held as the window opened.
  void keep_window_counters() {
    std::vector<TimelineCounter> kept;
    std::map<size_t, TimelineCounter> held;  // by track: the last value before the window
    for (const TimelineCounter& counter : counters_) {
      std::optional<std::pair<int64_t, int64_t>> span = trace_.window()->span(tracks_[counter.track].process);
      if (!span || counter.ns >= span->second) continue;
      if (counter.ns >= span->first) {
        kept.push_back(counter);
        continue;
      }
      TimelineCounter opening = counter;
      opening.ns = span->first;
      held[counter.track] = opening;
    }
    std::vector<TimelineCounter> opening;
    for (const auto& [track, counter] : held) opening.push_back(counter);
    kept.insert(kept.begin(), opening.begin(), opening.end());
    std::stable_sort(kept.begin(), kept.end(),
                     [](const TimelineCounter& a, const TimelineCounter& b) { return a.ns < b.ns; });
    counters_ = std::move(kept);
  }

  // "GPU 0 memory: pytorch tensors", ...: the series the report stacks. The
  // accesses and the model go once their series are read.
  void read_owner_counters() {
    dvdg::OpAccesses accesses = dvdg::find_op_accesses(trace_);
    memory::MemoryModel model = memory::build_memory_model(trace_, accesses);
    for (const memory::DeviceMemory& device : model.devices) {
      memory::OwnerSeries series = memory::owner_series(model, device);
      for (size_t owner = 0; owner < series.owners.size(); ++owner) {
        size_t index = counter_track(device.process,
                                     memory::device_name(device.device) + " memory: " + series.owners[owner]);
        for (size_t i = 0; i < series.times.size(); ++i)
          counters_.push_back({index, series.times[i], series.bytes[owner][i]});
      }
    }
  }

  size_t counter_track(trace::ProcessId process_id, std::string name) {
    TimelineTrack track;
    track.kind = TimelineTrack::Kind::Counter;
    const TimelineTrack& process = tracks_[process_track(process_id)];
    track.parent_uuid = process.uuid;
    track.process = process.process;
    track.pid = process.pid;
    track.name = std::move(name);
    ++counts_.counter_tracks;
    return add_track(std::move(track));
  }

  // Hands the sink every counter value up to `ns` (on the trace's clock, as
  // the slice sources' times), its time since the trace's start.
  void counters_until(int64_t ns) {
    for (; next_counter_ < counters_.size() && counters_[next_counter_].ns <= ns; ++next_counter_) {
      TimelineCounter counter = counters_[next_counter_];
      counter.ns = trace_.origin().since(counter.ns);
      sink_.counter(counter);
      ++counts_.counter_values;
    }
  }

  size_t thread_track(int64_t process_id, int64_t tid, TimelineTrack::Kind kind) {
    auto key = std::make_tuple(process_id, tid, kind);
    auto found = thread_tracks_.find(key);
    if (found != thread_tracks_.end()) return found->second;
    const TimelineTrack& process = tracks_[process_track(process_id)];
    TimelineTrack track;
    track.kind = kind;
    track.parent_uuid = process.uuid;
    track.process = process_id;
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

  size_t stream_track(int64_t process_id, NullableInt device, NullableInt stream) {
    auto key = std::make_tuple(process_id, device, stream);
    auto found = stream_tracks_.find(key);
    if (found != stream_tracks_.end()) return found->second;
    const TimelineTrack& process = tracks_[process_track(process_id)];
    TimelineTrack track;
    track.kind = TimelineTrack::Kind::Stream;
    track.parent_uuid = process.uuid;
    track.process = process_id;
    track.pid = process.pid;
    track.device = device;
    track.stream = stream;
    track.name = "GPU " + optional_text(device) + " stream " + optional_text(stream);
    size_t index = add_track(std::move(track));
    stream_tracks_.emplace(key, index);
    return index;
  }

  // Makes `made` a slice named by a text the trace stores (or a literal).
  void stored_name_slice(TimelineSlice& made, size_t track, int64_t start, int64_t end,
                         std::string_view stored_name, std::string_view category) {
    slice(made, track, start, end, stored_name, category);
    made.name_key = stored_name.data();
  }

  // Makes `made` a slice of the timeline, without arguments or flows: times
  // since the trace's start.
  void slice(TimelineSlice& made, size_t track, int64_t start, int64_t end, std::string_view name,
             std::string_view category) {
    made.track = track;
    made.start_ns = trace_.origin().since(start);
    made.end_ns = trace_.origin().since(end);
    made.name.assign(name);
    made.name_key = nullptr;
    made.category = category;
    made.args.clear();
    made.flows_out.clear();
    made.flows_in.clear();
  }

  // A GPU operation's flows: from the call that issued it, and along DVDG edges.
  void add_gpu_flows(TimelineSlice& slice, GpuOp kind, int64_t id, NullableInt correlation_id) {
    if (lookups_.first_call(correlation_id)) {
      slice.flows_in.push_back(call_flow_id(kind, id));
      ++counts_.api_flows;
    }
    dvdg_.append_in(kind, id, slice.flows_in);
    dvdg_.append_out(kind, id, slice.flows_out);
  }

  std::unique_ptr<SliceSource> api_calls() {
    auto times = [](const Packed<ApiCallRow>& call) {
      return std::make_pair(call.start_ns, std::max(call.end_ns, call.start_ns));
    };
    return slices<ApiCallRow>(
        trace_,
        "WHERE name_id IN (SELECT id FROM strings) "
        "ORDER BY start_ns, max(end_ns, start_ns) DESC, rowid",
        times,
        [this](const Packed<ApiCallRow>& call, int64_t start, int64_t end, TimelineSlice& made) {
          const Packed<StringRow>* name = trace_.find<StringRow>(call.name_id);
          stored_name_slice(made, thread_track(call.process, call.tid, TimelineTrack::Kind::Thread), start, end,
                            name ? trace_.text(name->text) : "",
                            call.domain == ApiDomain::Driver ? "cuda_driver" : "cuda_runtime");
          made.args.push_back({"correlation", call.correlation_id});
          made.args.push_back({"External id", call.correlation_id});
          made.args.push_back({"cbid", call.cbid});
          made.args.push_back(stored_text_arg("domain", to_string(call.domain)));
          if (call.return_code != 0) made.args.push_back({"return_code", call.return_code});
          if (call.driver_name_id)
            made.args.push_back(stored_text_arg("driver_call", trace_.string(call.driver_name_id)));
          // The outermost call of a correlation id draws the flows to its GPU work.
          if (lookups_.first_call(call.correlation_id) == call.id)
            lookups_.append_gpu_work(call.correlation_id, made.flows_out);
        });
  }

  std::unique_ptr<SliceSource> kernels() {
    return slices<KernelRow>(
        trace_, kTimedInOrder, gpu_times<KernelRow>,
        [this](const Packed<KernelRow>& kernel, int64_t start, int64_t end, TimelineSlice& made) {
          stored_name_slice(made, stream_track(kernel.process, kernel.device, kernel.stream), start, end,
                            trace_.string(kernel.demangled_id, trace_.string(kernel.name_id, "?")), "kernel");
          made.args.push_back({"kernel_id", kernel.id});
          add_gpu_ids(made.args, kernel.device, kernel.stream, kernel.call_correlation_id);
          add_framework_context(made.args, trace_, trace_.framework_contexts(), kernel.process,
                                kernel.call_correlation_id);
          add_dims(made.args, "grid", kernel.grid_x, kernel.grid_y, kernel.grid_z);
          add_dims(made.args, "block", kernel.block_x, kernel.block_y, kernel.block_z);
          std::string used = lookups_.kernel_allocations(kernel);
          if (!used.empty()) made.args.push_back({"allocations", std::move(used)});
          add_gpu_flows(made, GpuOp::Kernel, kernel.id, kernel.call_correlation_id);
        });
  }

  std::unique_ptr<SliceSource> copies() {
    return slices<MemcpyRow>(
        trace_, kTimedInOrder, gpu_times<MemcpyRow>,
        [this](const Packed<MemcpyRow>& copy, int64_t start, int64_t end, TimelineSlice& made) {
          slice(made, stream_track(copy.process, trace::copy_device(copy), copy.stream), start, end,
                copy_name(copy), "gpu_memcpy");
          made.args.push_back({"memcpy_id", copy.id});
          add_gpu_ids(made.args, trace::copy_device(copy), copy.stream, copy.call_correlation_id);
          add_framework_context(made.args, trace_, trace_.framework_contexts(), copy.process,
                                copy.call_correlation_id);
          add_bandwidth(made.args, copy.bytes, start, end);
          made.args.push_back(stored_text_arg("src_memory", to_string(copy.src_memory)));
          made.args.push_back(stored_text_arg("dst_memory", to_string(copy.dst_memory)));
          if (copy.src_alloc_id) made.args.push_back({"src_allocation", *copy.src_alloc_id});
          if (copy.dst_alloc_id) made.args.push_back({"dst_allocation", *copy.dst_alloc_id});
          add_gpu_flows(made, GpuOp::Copy, copy.id, copy.call_correlation_id);
        });
  }

  std::unique_ptr<SliceSource> memsets() {
    return slices<MemsetRow>(
        trace_, kTimedInOrder, gpu_times<MemsetRow>,
        [this](const Packed<MemsetRow>& memset, int64_t start, int64_t end, TimelineSlice& made) {
          slice(made, stream_track(memset.process, memset.device, memset.stream), start, end,
                "Memset (" + memory_name(memset.memory) + ")", "gpu_memset");
          made.args.push_back({"memset_id", memset.id});
          add_gpu_ids(made.args, memset.device, memset.stream, memset.call_correlation_id);
          add_framework_context(made.args, trace_, trace_.framework_contexts(), memset.process,
                                memset.call_correlation_id);
          add_bandwidth(made.args, memset.bytes, start, end);
          made.args.push_back({"value", memset.value});
          made.args.push_back(stored_text_arg("memory", to_string(memset.memory)));
          if (memset.alloc_id) made.args.push_back({"allocation", *memset.alloc_id});
          add_gpu_flows(made, GpuOp::Memset, memset.id, memset.call_correlation_id);
        });
  }

  // A range still open when the trace ended is drawn to the trace's last end.
  std::unique_ptr<SliceSource> nvtx_ranges() {
    int64_t last = lookups_.last_ns();
    auto times = [last](const Packed<NvtxRangeRow>& range) {
      return std::make_pair(range.start_ns, std::max(range.end_ns.value_or(last), range.start_ns));
    };
    return slices<NvtxRangeRow>(
        trace_, "ORDER BY start_ns, max(coalesce(end_ns, " + std::to_string(last) +
                    "), start_ns) DESC, rowid",
        times, [this](const Packed<NvtxRangeRow>& range, int64_t start, int64_t end, TimelineSlice& made) {
          stored_name_slice(made, thread_track(range.process, range.tid.value_or(0), TimelineTrack::Kind::Nvtx),
                            start, end, trace_.string(range.name_id, "?"), "user_annotation");
          if (!range.end_ns) made.args.push_back({"unclosed", int64_t{1}});
        });
  }

  std::unique_ptr<SliceSource> gpu_annotations() {
    auto make = [this](const GpuAnnotations::Annotation& annotation, TimelineSlice& made) {
      stored_name_slice(made, stream_track(annotation.process, annotation.device, annotation.stream),
                        annotation.start, annotation.end, trace_.string(annotation.name_id, "?"),
                        "gpu_user_annotation");
    };
    return std::make_unique<ListSlices<GpuAnnotations::Annotation, decltype(make)>>(
        gpu_annotations_.list(), make);
  }

  trace::Trace& trace_;
  TimelineSink& sink_;
  Progress& progress_;
  bool memory_owners_;
  GpuAnnotations gpu_annotations_;  // before lookups_, which fills it
  Lookups lookups_;
  TimelineCounts::Dvdg dvdg_origin_;
  DvdgFlowIndex dvdg_;
  TimelineCounts counts_;
  TimelineSlice slice_;  // each slice, made in place (SliceSource::make)
  std::vector<TimelineTrack> tracks_;
  std::vector<TimelineCounter> counters_;  // by time on the trace's clock
  size_t next_counter_ = 0;
  std::map<int64_t, size_t> process_tracks_;
  std::map<std::tuple<int64_t, int64_t, TimelineTrack::Kind>, size_t> thread_tracks_;
  std::map<std::tuple<int64_t, NullableInt, NullableInt>, size_t> stream_tracks_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;
};

class CollectingSink : public TimelineSink {
 public:
  explicit CollectingSink(Timeline& timeline) : timeline_(timeline) {}
  void source(const TimelineSource& source) override { timeline_.source = source; }
  void track(const TimelineTrack& track) override { timeline_.tracks.push_back(track); }
  void slice(const TimelineSlice& slice) override { timeline_.slices.push_back(slice); }
  void counter(const TimelineCounter& counter) override { timeline_.counters.push_back(counter); }
  void finish() override {}

 private:
  Timeline& timeline_;
};

}  // namespace

std::map<int64_t, TimelineRank> process_ranks(trace::Trace& trace) {
  std::map<int64_t, TimelineRank> ranks;
  for (const Packed<CommunicatorRow>& communicator : trace.rows<CommunicatorRow>()) {
    auto known = ranks.find(communicator.process);
    if (known != ranks.end() && communicator.nranks <= known->second.world_size) continue;
    std::string backend(to_string(communicator.library));
    std::transform(backend.begin(), backend.end(), backend.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    ranks[communicator.process] = TimelineRank{backend, communicator.rank, communicator.nranks};
  }
  return ranks;
}

TimelineCounts stream_timeline(trace::Trace& trace, TimelineSink& sink, Progress& progress,
                               const TimelineContent& content) {
  return TimelineReader(trace, sink, progress, content).read();
}

Timeline build_timeline(trace::Trace& trace, Progress& progress, const TimelineContent& content) {
  Timeline timeline;
  CollectingSink sink(timeline);
  TimelineCounts counts = stream_timeline(trace, sink, progress, content);
  timeline.flow_count = counts.flows;
  timeline.api_flow_count = counts.api_flows;
  timeline.dvdg_flow_count = counts.dvdg_flows;
  return timeline;
}

void replay_timeline(const Timeline& timeline, TimelineSink& sink) {
  sink.source(timeline.source);
  for (const TimelineTrack& track : timeline.tracks) sink.track(track);
  auto counter = timeline.counters.begin();
  for (const TimelineSlice& slice : timeline.slices) {
    for (; counter != timeline.counters.end() && counter->ns <= slice.start_ns; ++counter)
      sink.counter(*counter);
    sink.slice(slice);
  }
  for (; counter != timeline.counters.end(); ++counter) sink.counter(*counter);
  sink.finish();
}

}  // namespace apptracer
