// Rules only the data flow can decide, read off the DVDG (analyzer/dvdg):
// copies of data the destination already holds, copies independent of the
// kernels they are serialized with, reads of memory nothing wrote, writes
// nothing reads, allocations nothing touches.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "analyzer/dvdg/labels.h"
#include "analyzer/diagnose/rules.h"
#include "analyzer/trace/exact_coverage.h"

namespace apptracer::diagnose {

namespace {

using dvdg::Edge;
using dvdg::EdgeKind;
using dvdg::Graph;
using dvdg::Op;
using dvdg::OpKind;
using dvdg::Value;

// A data-flow finding whose waste was over before the first steady step
// (a framework's compiler trying kernels on scratch buffers) is start-up's:
// paid once, and ranked after the steady steps' findings.
void mark_startup(const TraceFacts& facts, int64_t process, int64_t over_ns, Finding& f) {
  if (!facts.within_startup(process, over_ns)) return;
  f.startup = true;
  f.estimate += std::string(f.estimate.empty() ? "" : "; ") + "in start-up, before the first steady step: paid once";
}

// The table an op's source_id is a row of (docs/schema.md, dvdg_ops).
const char* table_of(const Graph& graph, const Op& op) {
  switch (op.kind) {
    case OpKind::Copy:
    case OpKind::Prefetch: return "memcpys";
    case OpKind::Memset: return "memsets";
    case OpKind::Kernel: return "kernels";
    case OpKind::Allocation:
    case OpKind::Free: return "allocations";
    case OpKind::HostPhase: return "um_events";
    case OpKind::Collective:
    case OpKind::Message: return "collectives";
    case OpKind::EventRecord:
    case OpKind::EventWait: return "stream_events";
    case OpKind::Migration:
      // Its cause's row, or its prefetch's when nothing else caused it.
      return op.caused_by == Op::kNoOp ? "memcpys" : table_of(graph, graph.ops[op.caused_by]);
  }
  return "";
}

// The trace row an op came from: the GPU time (0 when untimed), the call,
// and for a copy or memset its row.
struct OpRow {
  int64_t gpu_ns = 0;
  std::optional<int64_t> correlation;
  const Transfer* transfer = nullptr;
};

OpRow row_of(const TraceFacts& facts, const Op& op) {
  if (op.kind == OpKind::Kernel) {
    if (const Kernel* k = facts.ops().kernel(op.source_id)) return {k->gpu_ns(), k->row->call_correlation_id};
  } else if (op.kind == OpKind::Copy) {
    if (const Transfer* t = facts.ops().copy(op.source_id)) return {t->gpu_ns(), t->correlation(), t};
  } else if (op.kind == OpKind::Memset) {
    for (const Transfer& t : facts.ops().memsets()) {
      if (t.id() == op.source_id) return {t.gpu_ns(), t.correlation(), &t};
    }
  }
  return {};
}

bool timed(const TraceFacts& facts, const Op& op) {
  if (op.kind == OpKind::Kernel) {
    const Kernel* k = facts.ops().kernel(op.source_id);
    return k && k->timed();
  }
  if (op.kind == OpKind::Copy) {
    const Transfer* t = facts.ops().copy(op.source_id);
    return t && t->timed();
  }
  return false;
}

template <typename F>
void for_writes(const Graph& graph, uint32_t op, F&& f) {
  for (uint32_t w = graph.op_writes_begin[op]; w < graph.op_writes_begin[op + 1]; ++w)
    f(graph.op_writes[w]);
}

// Which bytes a value holds, as pieces of earlier values: a copy's
// destination holds (part of) its source; a value with no pieces is its own
// content. Two ranges hold the same data when they resolve to the same
// (origin value, offset).
class ContentTracker {
 public:
  struct Piece {
    int64_t offset, bytes;
    uint32_t origin;
    int64_t origin_offset;
  };
  using Origin = std::pair<uint32_t, int64_t>;

  Origin resolve(uint32_t value, int64_t offset, int64_t bytes) const {
    auto found = pieces_.find(value);
    if (found != pieces_.end()) {
      for (const Piece& p : found->second) {
        if (p.offset <= offset && saturating_add(offset, bytes) <= saturating_add(p.offset, p.bytes))
          return {p.origin, saturating_add(p.origin_offset, saturating_sub(offset, p.offset))};
      }
    }
    return {value, offset};
  }

  // `written` is `previous` with [offset, offset + bytes) now holding `data`.
  void copy(uint32_t previous, int64_t location_bytes, uint32_t written, int64_t offset,
            int64_t bytes, Origin data) {
    std::vector<Piece> result;
    for (const Piece& p : pieces_of(previous, location_bytes)) {
      if (p.offset < offset) {
        Piece left = p;
        left.bytes = std::min(p.bytes, saturating_sub(offset, p.offset));
        result.push_back(left);
      }
      int64_t end = saturating_add(offset, bytes);
      int64_t piece_end = saturating_add(p.offset, p.bytes);
      if (piece_end > end) {
        Piece right = p;
        int64_t start = std::max(p.offset, end);
        right.origin_offset = saturating_add(right.origin_offset, saturating_sub(start, p.offset));
        right.bytes = saturating_sub(piece_end, start);
        right.offset = start;
        result.push_back(right);
      }
    }
    result.push_back({offset, bytes, data.first, data.second});
    pieces_[written] = std::move(result);
  }

  // The same content somewhere else (a unified-memory migration).
  void move(uint32_t previous, int64_t location_bytes, uint32_t moved) {
    pieces_[moved] = pieces_of(previous, location_bytes);
  }

 private:
  std::vector<Piece> pieces_of(uint32_t value, int64_t location_bytes) const {
    auto found = pieces_.find(value);
    if (found != pieces_.end()) return found->second;
    return {{0, location_bytes, value, 0}};
  }
  std::unordered_map<uint32_t, std::vector<Piece>> pieces_;
};

bool is_host(const dvdg::Location& location) {
  return !is_device_memory(location.memory) && location.memory != MemoryKind::Managed;
}

// Whether a kernel that wrote `where` may have read back what it wrote: a
// pointer it may also read through (no signature says a pointer is only
// written: any non-const one may be read) lets it use the memory as
// scratch, as a reduction's staging buffer, written by each block and read
// by the last (PyTorch's batch-norm statistics, reduce_kernel's
// accumulators). Only where --exact saw all the launch did in that
// allocation do its ranges say whether it read there.
bool writer_may_read_back(const TraceFacts& facts, const Op& producer, const dvdg::Location& where) {
  if (producer.kind != OpKind::Kernel) return false;
  const Kernel* kernel = facts.ops().kernel(producer.source_id);
  const Allocation* alloc = facts.ops().allocation(where.alloc_id);
  if (!kernel || !alloc || !facts.kernel_arguments) return true;
  int64_t begin = where.address, end = saturating_add(where.address, where.bytes);
  trace::KernelArguments::Words words = facts.kernel_arguments->of(*kernel->row);
  if (const trace::KernelExact* exact = facts.exact.of(kernel->row->id)) {
    if (trace::coverage_of(*exact, words).in(alloc->id()) == ExactCoverage::Exact) {
      return std::any_of(exact->accesses.begin(), exact->accesses.end(), [&](const trace::ExactAccess& range) {
        return range.access != AccessKind::Write && range.lo < end && range.hi > begin;
      });
    }
  }
  return std::any_of(words.begin(), words.end(), [&](const trace::KernelWord& word) {
    int64_t pointer = saturating_add(alloc->address(), word.alloc_offset);
    return word.alloc_id == alloc->id() && word.access != AccessKind::Write && pointer >= begin &&
           pointer < end;
  });
}

struct Redundant {
  Finding finding;
  int64_t count = 0, bytes = 0, now = 0;
};

}  // namespace

void redundant_copy(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  const Graph& graph = facts.graph;
  std::vector<uint32_t> current(graph.locations.size(), Value::kNoOp);
  for (uint32_t v = 0; v < graph.values.size(); ++v) {
    uint32_t& first = current[graph.values[v].location];
    if (first == Value::kNoOp && graph.values[v].version == 0) first = v;
  }
  ContentTracker content;
  // By (source location, destination location, round trip).
  std::map<std::tuple<uint32_t, uint32_t, bool>, Redundant> groups;
  for (uint32_t op = 0; op < graph.ops.size(); ++op) {
    const Op& record = graph.ops[op];
    if (record.kind == OpKind::Copy && record.copy_kind != CopyKind::Prefetch) {
      const Transfer* t = facts.ops().copy(record.source_id);
      graph.for_each_edge(op, [&](const Edge& edge) {
        if (edge.kind != EdgeKind::Data || !t) return;
        uint32_t written = edge.dst_value;
        uint32_t location = graph.values[written].location;
        uint32_t previous = current[location];
        int64_t offset = t->dst_offset().value_or(0);
        auto data = content.resolve(edge.src_value, t->src_offset().value_or(0), t->bytes());
        if (previous != Value::kNoOp && graph.values[previous].holds_data &&
            data == content.resolve(previous, offset, t->bytes())) {
          bool round_trip =
              graph.values[data.first].location == location && data.second == offset;
          uint32_t source = graph.values[edge.src_value].location;
          Redundant& group = groups[{source, location, round_trip}];
          if (group.count == 0) {
            locate(context, group.finding, t->correlation(),
                   t->api_start_ns().value_or(record.issue_ns));
          }
          ++group.count;
          group.bytes = saturating_add(group.bytes, t->bytes());
          group.now = saturating_add(group.now, held_ns(facts, facts.busy_on(t->device().value_or(0)), *t));
          add_row(context, group.finding, "memcpys", t->id());
          add_name(group.finding, transfer_name(*t));
        }
        if (previous != Value::kNoOp) {
          content.copy(previous, graph.locations[location].bytes, written, offset, t->bytes(), data);
        }
      });
    } else if (record.kind == OpKind::Migration) {
      for_writes(graph, op, [&](uint32_t moved) {
        uint32_t location = graph.values[moved].location;
        if (current[location] != Value::kNoOp)
          content.move(current[location], graph.locations[location].bytes, moved);
      });
    }
    for_writes(graph, op, [&](uint32_t written) { current[graph.values[written].location] = written; });
  }
  for (auto& [key, group] : groups) {
    auto [source, destination, round_trip] = key;
    Finding& f = group.finding;
    std::string from = dvdg::location_name(graph, source);
    std::string to = dvdg::location_name(graph, destination);
    f.rule = "redundant_copy";
    if (round_trip) {
      f.what = std::to_string(group.count) + " copies (" + dvdg::format_bytes(group.bytes) +
               ") from " + from + " back to " + to + ", which still holds that data unchanged";
      f.fix = "keep using the data in " + to + " instead of copying it back from " + from;
    } else {
      f.what = std::to_string(group.count) + " copies (" + dvdg::format_bytes(group.bytes) +
               ") from " + from + " to " + to + ", which already holds that data";
      f.fix = "copy once and reuse " + to + ": nothing wrote it since the data arrived";
    }
    if (is_host(graph.locations[source])) {
      f.what += " (unless CPU code rewrote " + from + " in between, which a trace cannot see)";
    }
    f.cost_ns = group.now;
    f.saving_ns = group.now;
    f.estimate = "the time the copies held the program (GPU time, or a blocking call's where "
                 "longer): they can be dropped";
    findings.push_back(std::move(f));
  }
}

void no_copy_compute_overlap(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  const Graph& graph = facts.graph;
  // Per (device, stream): its GPU ops in stream order.
  std::map<std::pair<int64_t, int64_t>, std::vector<uint32_t>> lanes;
  for (uint32_t op = 0; op < graph.ops.size(); ++op) {
    const Op& record = graph.ops[op];
    bool gpu = record.kind == OpKind::Kernel || record.kind == OpKind::Memset ||
               (record.kind == OpKind::Copy && record.copy_kind != CopyKind::Prefetch);
    if (!gpu || !record.stream) continue;
    lanes[{record.device.value_or(-1), *record.stream}].push_back(op);
  }
  auto touched = [&](uint32_t op, std::set<uint32_t>& reads, std::set<uint32_t>& writes) {
    graph.for_each_edge(op, [&](const Edge& e) { reads.insert(graph.values[e.src_value].location); });
    for_writes(graph, op, [&](uint32_t v) { writes.insert(graph.values[v].location); });
  };
  auto independent = [&](uint32_t a, uint32_t b) {
    if (graph.ops[a].arguments_unknown || graph.ops[b].arguments_unknown) return false;
    std::set<uint32_t> reads_a, writes_a, reads_b, writes_b;
    touched(a, reads_a, writes_a);
    touched(b, reads_b, writes_b);
    for (uint32_t l : writes_a) {
      if (reads_b.count(l) || writes_b.count(l)) return false;
    }
    for (uint32_t l : writes_b) {
      if (reads_a.count(l)) return false;
    }
    return true;
  };
  for (auto& [lane, ops] : lanes) {
    std::stable_sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) {
      return graph.ops[a].start_ns < graph.ops[b].start_ns;
    });
    Finding f;
    int64_t copies = 0, copy_ns = 0, saving = 0;
    bool host_side = false;  // any of the copies between host and device
    for (size_t i = 0; i + 1 < ops.size(); ++i) {
      uint32_t a = ops[i], b = ops[i + 1];
      const Op& first = graph.ops[a];
      const Op& second = graph.ops[b];
      bool pair = (first.kind == OpKind::Copy && second.kind == OpKind::Kernel) ||
                  (first.kind == OpKind::Kernel && second.kind == OpKind::Copy);
      if (!pair || !timed(facts, first) || !timed(facts, second) || !independent(a, b)) continue;
      uint32_t copy = first.kind == OpKind::Copy ? a : b;
      uint32_t kernel = copy == a ? b : a;
      OpRow copy_row = row_of(facts, graph.ops[copy]);
      OpRow kernel_row = row_of(facts, graph.ops[kernel]);
      if (copies == 0) locate(context, f, copy_row.correlation, graph.ops[copy].issue_ns);
      ++copies;
      host_side = host_side || graph.ops[copy].copy_kind == CopyKind::HtoD ||
                  graph.ops[copy].copy_kind == CopyKind::DtoH;
      copy_ns = saturating_add(copy_ns, copy_row.gpu_ns);
      saving = saturating_add(saving, std::min(copy_row.gpu_ns, kernel_row.gpu_ns));
      add_row(context, f, "memcpys", graph.ops[copy].source_id);
      add_row(context, f, "kernels", graph.ops[kernel].source_id);
      add_name(f, dvdg::op_name(graph, copy) + " of " + dvdg::format_bytes(graph.ops[copy].bytes));
      add_name(f, dvdg::op_name(graph, kernel));
      ++i;  // each op overlaps at most one partner
    }
    if (copies == 0 || saving < context.limits.min_cost_ns) continue;
    f.rule = "no_copy_compute_overlap";
    f.what = std::to_string(copies) + " copies on stream " + std::to_string(lane.second) +
             " of device " + std::to_string(lane.first) + " (" + format_ns(copy_ns) +
             ") ran serialized next to kernels that neither use their data nor make it";
    f.cost_ns = copy_ns;
    f.saving_ns = saving;
    f.estimate = "each copy overlapped with its neighbouring kernel: the shorter of the two";
    f.fix = std::string("issue these copies with cudaMemcpyAsync") +
            (host_side ? " from pinned memory" : "") +
            " on a second stream (ordered by events only where the data flow needs it) so they "
            "run under the kernels";
    findings.push_back(std::move(f));
  }
}

void uninitialized_read(const RuleContext& context, std::vector<Finding>& findings) {
  const Graph& graph = context.facts.graph;
  std::map<uint32_t, Finding> by_location;
  std::map<uint32_t, int64_t> reads;
  for (uint32_t op = 0; op < graph.ops.size(); ++op) {
    if (!graph.ops[op].reads_uninitialized) continue;
    graph.for_each_edge(op, [&](const Edge& edge) {
      if (!edge.uninitialized_read) return;
      uint32_t location = graph.values[edge.src_value].location;
      Finding& f = by_location[location];
      if (reads[location]++ == 0) {
        locate(context, f, row_of(context.facts, graph.ops[op]).correlation,
               graph.ops[op].issue_ns);
      }
      add_row(context, f, table_of(graph, graph.ops[op]), graph.ops[op].source_id);
      add_name(f, dvdg::op_name(graph, op));
    });
  }
  for (auto& [location, f] : by_location) {
    f.rule = "uninitialized_read";
    f.what = std::to_string(reads[location]) + " read(s) of " +
             dvdg::location_name(graph, location) + " before anything wrote it";
    f.correctness = true;
    f.estimate = "a correctness problem: the data read is garbage";
    f.fix = "write " + dvdg::location_name(graph, location) +
            " (copy or cudaMemset) before it is read, or read the buffer that was meant";
    findings.push_back(std::move(f));
  }
}

void written_never_read(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  const Graph& graph = facts.graph;
  // Read: by any op's certain or possible read, also one of an op that
  // wrote nothing (which has no edge from it).
  std::vector<bool> read(graph.values.size(), false), carried(graph.values.size(), false);
  for (uint32_t value : graph.op_reads) read[value] = true;
  // The dependences not held one by one come from op_reads, read already.
  for (const Edge& edge : graph.listed_edges) {
    if (edge.kind == EdgeKind::Data) read[edge.src_value] = true;
    if (edge.kind == EdgeKind::Carry) carried[edge.src_value] = true;
  }
  // A kernel whose arguments were not captured may have read anything.
  uint32_t first_opaque = Value::kNoOp;
  for (uint32_t op = 0; op < graph.ops.size() && first_opaque == Value::kNoOp; ++op) {
    if (graph.ops[op].arguments_unknown) first_opaque = op;
  }
  // Kernels reaching through arrays of pointers (PyTorch's chunk_cat gathers
  // FSDP's gradients through a char**) read memory no argument shows, by
  // process in program order: a write one of them follows, still held when
  // it ran, may have been read.
  std::unordered_map<int64_t, std::vector<uint32_t>> unseen_readers;
  for (uint32_t op = 0; op < graph.ops.size(); ++op) {
    if (graph.ops[op].writes_unseen) unseen_readers[graph.ops[op].process].push_back(op);
  }
  auto read_unseen = [&](int64_t process, uint32_t written_by, uint32_t gone_by) {
    auto readers = unseen_readers.find(process);
    if (readers == unseen_readers.end()) return false;
    auto next = std::upper_bound(readers->second.begin(), readers->second.end(), written_by);
    return next != readers->second.end() && *next < gone_by;
  };
  // Values per location, in version order (migrated twins share a
  // version): location l's are at first[l] .. first[l + 1] of all the
  // values so ordered. One array, not a vector per location: a training
  // trace has millions. It is made for a range of locations at a time,
  // those of at most an eighth of the values (or a million), a pass over
  // the values each: the whole of it was 30 MB at 7.5M values, at the top
  // of the report's resident peak on the 2,000-step GPT-2 trace, and a
  // quarter of it still 22 MB at the 21.8M values of its default recording.
  std::vector<uint32_t> first(graph.locations.size() + 1, 0);
  for (const Value& value : graph.values) ++first[value.location + 1];
  for (size_t l = 1; l < first.size(); ++l) first[l] += first[l - 1];
  size_t most = std::max<size_t>(graph.values.size() / 8, size_t{1} << 20);
  std::vector<uint32_t> by_location, cursor;
  // Per version of the location at hand: read (by any twin); versions count
  // up from 0 by one per write, each one a value (a migration's twin shares one).
  std::vector<char> version_read;
  for (uint32_t from = 0, to = 0; from < graph.locations.size(); from = to) {
    to = from + 1;
    while (to < graph.locations.size() && first[to + 1] - first[from] <= most) ++to;
    by_location.resize(first[to] - first[from]);
    cursor.assign(first.begin() + from, first.begin() + to);
    for (uint32_t v = 0; v < graph.values.size(); ++v) {
      uint32_t location = graph.values[v].location;
      if (location >= from && location < to) by_location[cursor[location - from]++ - first[from]] = v;
    }
    for (uint32_t location = from; location < to; ++location) {
      const dvdg::Location& where = graph.locations[location];
      if (is_host(where)) continue;  // CPU code reads host memory invisibly
      // A library's own memory is read by its kernels through pointers no
      // argument shows (NCCL's communicator structures, set up by memsets and
      // copies while it initializes).
      const Allocation* alloc = facts.ops().allocation(where.alloc_id);
      if (alloc && facts.library_memory(*alloc)) continue;
      const uint32_t* values = by_location.data() + (first[location] - first[from]);
      size_t count = first[location + 1] - first[location];
      uint32_t versions = 0;
      for (size_t i = 0; i < count; ++i) versions = std::max(versions, graph.values[values[i]].version + 1);
      version_read.assign(versions, 0);
      bool any_read = false;
      for (size_t i = 0; i < count; ++i) {
        version_read[graph.values[values[i]].version] |= static_cast<char>(read[values[i]]);
        any_read |= read[values[i]];
      }
      // Made at the first wasted write: most of a training trace's millions
      // of locations have none.
      std::optional<Finding> finding;
      int64_t writes = 0, dead = 0, now = 0, last_write_end = INT64_MIN;
      for (size_t i = 0; i < count; ++i) {
        const Value& value = graph.values[values[i]];
        if (value.version == 0 || value.producer_op == Value::kNoOp) continue;
        const Op& producer = graph.ops[value.producer_op];
        if (producer.kind == OpKind::Migration) continue;
        if (first_opaque != Value::kNoOp && first_opaque > value.producer_op) continue;
        bool overwritten = value.version + 1 < version_read.size();
        bool wasted = any_read ? overwritten && !version_read[value.version] && !carried[values[i]]
                               : true;
        if (!wasted) continue;
        // Until the next version's write (or the free) replaces it.
        uint32_t gone_by = value.freed_by_op;
        for (size_t next = i + 1; next < count; ++next) {
          if (graph.values[values[next]].version > value.version) {
            gone_by = graph.values[values[next]].producer_op;
            break;
          }
        }
        if (read_unseen(producer.process, value.producer_op, gone_by)) continue;
        if (writer_may_read_back(facts, producer, where)) continue;
        // NCCL's work descriptors, which its kernels read unseen.
        if (facts.inside_communication_call(row_of(facts, producer).correlation)) continue;
        if (writes++ == 0) {
          finding.emplace();
          locate(context, *finding, row_of(facts, producer).correlation, producer.issue_ns);
        }
        dead = saturating_add(dead, overwritten);
        last_write_end = std::max(last_write_end, producer.end_ns);
        if (const Transfer* t = row_of(facts, producer).transfer) {
          now = saturating_add(now, held_ns(facts, facts.busy_on(t->device().value_or(0)), *t));
        }
        add_row(context, *finding, table_of(graph, producer), producer.source_id);
        add_name(*finding, dvdg::op_name(graph, value.producer_op));
      }
      if (writes == 0) continue;
      Finding& f = *finding;
      std::string name = dvdg::location_name(graph, location);
      f.rule = "written_never_read";
      f.what = any_read ? std::to_string(writes) + " write(s) to " + name +
                              " overwritten before anything read them"
                        : name + " is written " + std::to_string(writes) +
                              " time(s) and never read by a copy or kernel";
      f.cost_ns = now;
      if (now > 0) f.saving_ns = now;
      f.estimate = now > 0 ? "the copies and memsets among those writes can be dropped: the time "
                             "they held the program (kernels' time is not counted: they may make "
                             "other outputs)"
                           : "kernels wrote it, and may make other outputs: what dropping the "
                             "writes saves is unknown";
      f.fix = any_read ? "drop the writes whose data is overwritten unread"
                       : "drop the writes to " + name + " (and the allocation) or use the result";
      mark_startup(facts, where.process, last_write_end, f);
      findings.push_back(std::move(f));
    }
  }
}

void allocation_never_used(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  const Graph& graph = facts.graph;
  std::vector<bool> used(graph.locations.size(), false);
  for (const Value& value : graph.values) {
    if (value.version > 0) used[value.location] = true;
  }
  // What a dependence comes from: a listed edge's source, or a read of a
  // kernel that wrote something (its reads times its writes, not visited
  // one by one: a foreach kernel's are hundreds by hundreds).
  for (const Edge& edge : graph.listed_edges) used[graph.values[edge.src_value].location] = true;
  for (uint32_t op = 0; op < graph.ops.size(); ++op) {
    if (graph.ops[op].kind != OpKind::Kernel || graph.op_writes_begin[op] == graph.op_writes_begin[op + 1]) continue;
    for (uint32_t r = graph.op_reads_begin[op]; r < graph.op_reads_begin[op + 1]; ++r)
      used[graph.values[graph.op_reads[r]].location] = true;
  }
  // A framework's segment is used through its tensor blocks, which are
  // locations of their own with the segment's alloc_id.
  std::set<int64_t> used_allocations;
  for (uint32_t location = 0; location < graph.locations.size(); ++location) {
    if (used[location] && graph.locations[location].alloc_id)
      used_allocations.insert(*graph.locations[location].alloc_id);
  }
  std::set<int64_t> migrated;
  for (const trace::UmEvent& event : facts.um.events) {
    if (event.alloc_id) migrated.insert(*event.alloc_id);
  }
  // A segment holding a library's workspace (PyTorch's cuBLAS workspace
  // block, reached through the handle) is the library's to keep.
  std::set<int64_t> workspace_segments;
  for (const memory::MemoryItem& item : facts.memory_model.items) {
    if (item.segment != memory::kNoItem && memory::is_library_memory(item.owner))
      workspace_segments.insert(facts.memory_model.items[item.segment].id);
  }
  std::vector<std::pair<int64_t, int64_t>> opaque;  // windows of kernels without arguments
  for (const dvdg::Op& op : graph.ops) {
    if (op.arguments_unknown) opaque.emplace_back(op.issue_ns, op.end_ns);
  }
  for (uint32_t location = 0; location < graph.locations.size(); ++location) {
    const dvdg::Location& where = graph.locations[location];
    // A block the framework handed out and nobody used is the framework's
    // to keep: the program allocated the segment.
    if (used[location] || !where.alloc_id || !where.alloc_kind || where.sub_allocation_id ||
        used_allocations.count(*where.alloc_id))
      continue;
    switch (*where.alloc_kind) {
      case AllocKind::Device:
      case AllocKind::PinnedHost:
      case AllocKind::WriteCombinedHost:
      case AllocKind::MappedHost:
      case AllocKind::Managed:
      case AllocKind::Pool: break;
      default: continue;
    }
    if (migrated.count(*where.alloc_id)) continue;
    const Allocation* alloc = facts.ops().allocation(where.alloc_id);
    if (!alloc || facts.library_memory(*alloc) || workspace_segments.count(alloc->id())) continue;
    int64_t end = alloc->free_ns().value_or(facts.end_ns());
    bool maybe_used = std::any_of(opaque.begin(), opaque.end(), [&](const auto& window) {
      return window.first <= end && window.second >= alloc->alloc_ns();
    });
    if (maybe_used) continue;
    Finding f;
    locate(context, f, alloc->alloc_correlation(), alloc->alloc_ns());
    add_row(context, f, "allocations", alloc->id());
    int64_t now = 0;
    for (std::optional<int64_t> correlation : {alloc->alloc_correlation(), alloc->free_correlation()}) {
      if (const HostCall* call = facts.ops().call(correlation)) now = saturating_add(now, call->duration());
    }
    f.rule = "allocation_never_used";
    f.what = allocation_name(facts, alloc->id()) + " is never copied to, set, or passed to a kernel";
    f.names.push_back(allocation_name(facts, alloc->id()));
    f.cost_ns = now;
    f.saving_ns = now;
    f.estimate = "its allocation and free calls";
    f.fix = "remove the allocation (" + dvdg::format_bytes(alloc->bytes()) + " held for nothing)";
    if (alloc->free_ns()) mark_startup(facts, alloc->process(), *alloc->free_ns(), f);
    findings.push_back(std::move(f));
  }
}

}  // namespace apptracer::diagnose
