#include "analyzer/dvdg/graph_builder.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "apptracer/saturating.h"
#include "analyzer/dvdg/program_order.h"

namespace apptracer::dvdg {

namespace {

// Rearranges ops into program order in place (following the permutation's
// cycles), so a million-op trace is not held twice.
std::vector<Op> in_program_order(std::vector<Op>&& ops, const std::vector<uint32_t>& order) {
  std::vector<bool> placed(ops.size(), false);
  for (size_t start = 0; start < ops.size(); ++start) {
    if (placed[start]) continue;
    // Position p takes the op from order[p]; walk the cycle starting at `start`.
    Op first = std::move(ops[start]);
    size_t position = start;
    while (true) {
      placed[position] = true;
      size_t from = order[position];
      if (from == start) {
        ops[position] = std::move(first);
        break;
      }
      ops[position] = std::move(ops[from]);
      position = from;
    }
  }
  return std::move(ops);
}

// What a location holds now: its values by byte range. Pieces are sorted by
// start and cover the location; piece i ends where piece i + 1 begins (the
// last at the location's end). Most locations are written whole and keep a
// single piece.
struct Piece {
  int64_t begin;
  uint32_t value;
};

// A location's pieces: one held in place, more on the heap. A training
// trace has a location per tensor block, a million and more, nearly all
// with one piece: a vector each cost a heap allocation and 56 bytes.
class Pieces {
 public:
  bool empty() const { return !more_ && one_.value == kNone; }
  size_t size() const { return more_ ? more_->size() : (empty() ? 0 : 1); }
  Piece* begin() { return more_ ? more_->data() : &one_; }
  Piece* end() { return begin() + size(); }
  const Piece* begin() const { return const_cast<Pieces*>(this)->begin(); }
  const Piece* end() const { return const_cast<Pieces*>(this)->end(); }

  // Only `piece` from now on.
  void assign_one(Piece piece) {
    more_.reset();
    one_ = piece;
  }
  // As std::vector's; pointers at or after `first` are invalidated.
  Piece* erase(Piece* first, Piece* last) {
    ptrdiff_t from = first - begin(), to = last - begin();
    if (more_) return more_->data() + (more_->erase(more_->begin() + from, more_->begin() + to) - more_->begin());
    if (from == to) return first;
    one_.value = kNone;
    return &one_;
  }
  // As std::vector's; every pointer is invalidated.
  Piece* insert(Piece* at, Piece piece) {
    ptrdiff_t index = at - begin();
    if (empty()) {
      one_ = piece;
      return &one_;
    }
    if (!more_) more_ = std::make_unique<std::vector<Piece>>(1, one_);
    return more_->data() + (more_->insert(more_->begin() + index, piece) - more_->begin());
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;  // no value: no piece held in place
  Piece one_{0, kNone};
  std::unique_ptr<std::vector<Piece>> more_;
};

// A kernel gets an access set (graph.h) when its possible reads and its
// writes are more than this many values, and the set holds fewer edges
// than the dependences it stands for. A GEMM's or an elementwise kernel's
// pointers reach three to five values; a foreach kernel's pointer arrays
// hold up to a hundred tensors each, and an extent assumed to a region's
// end may cross many values. (On the bundled PyTorch trace 16 left 10.4
// edges per operation, 8 leaves 9.8; below 8 the sets would be small
// kernels' and save little.)
constexpr size_t kAccessSetValues = 8;

// An access of the op being applied, with its position in the copied bytes
// (AccessPosition; -1: none).
struct AccessWithPosition : Access {
  int64_t position = -1;
};

class Builder {
 public:
  explicit Builder(OpAccesses&& trace) : trace_(std::move(trace)) {
    // The accesses were reserved one per kernel word, and merging took out
    // nearly a third on a training trace (in-place ops pass one tensor
    // twice). The build holds them to its end, beside the values it makes:
    // their room is given back first, while the copy is the largest thing
    // made. (Done here, not where they are found: the memory view reads
    // them without a graph, and the copy would be its peak.)
    trace_.accesses.shrink_to_fit();
    size_t locations = trace_.locations.size();
    pieces_.resize(locations);
    version_.assign(locations, 0);
    last_writer_.assign(locations, Op::kNoOp);
    freed_by_.assign(locations, Value::kNoOp);
  }

  Graph build(const std::vector<uint32_t>& order) {
    graph_.ops = in_program_order(std::move(trace_.ops), order);
    renumber_causes(order);
    graph_.op_listed_edges.reserve(order.size() + 1);
    graph_.op_writes_begin.reserve(order.size() + 1);
    graph_.op_reads_begin.reserve(order.size() + 1);
    reserve_values();
    for (uint32_t op = 0; op < order.size(); ++op) apply(op, order[op]);
    end_freed_sub_allocations();
    graph_.op_listed_edges.push_back(static_cast<uint32_t>(graph_.listed_edges.size()));
    graph_.op_writes_begin.push_back(static_cast<uint32_t>(graph_.op_writes.size()));
    graph_.op_reads_begin.push_back(static_cast<uint32_t>(graph_.op_reads.size()));
    graph_.locations = std::move(trace_.locations);
    graph_.names = std::move(trace_.names);
    return std::move(graph_);
  }

 private:
  // A value one operation read, gathered before any of its writes: the part
  // of it read, in the copied bytes' positions for linear copies.
  struct Read {
    uint32_t value;
    int64_t position_begin;  // -1: no positions (kernels, 2D copies)
    int64_t position_end;
    bool uninitialized;
    int64_t bytes;  // of the value, read
    bool certain;   // the trace says the op read it (docs/dvdg.md)
  };

  // The values and what each op read and wrote grow once, to about what
  // they end at: a write makes a value (more where it splits one), a
  // location's first read or write its version 0. Grown by doubling, a
  // million-kernel trace's 8 million values held a third more memory
  // than they needed while the last copy was made.
  void reserve_values() {
    size_t reads = 0, writes = 0;
    for (const Access& access : trace_.accesses) {
      reads += access.reads;
      writes += access.writes;
    }
    graph_.values.reserve(trace_.locations.size() + writes);
    graph_.op_writes.reserve(writes);
    graph_.op_reads.reserve(reads);
  }

  // Ops point at the op that caused them (and NCCL kernels at the
  // collective they ran) by trace position; the graph speaks in
  // program-order positions.
  void renumber_causes(const std::vector<uint32_t>& order) {
    std::vector<uint32_t> position;
    for (uint32_t p = 0; p < order.size(); ++p) {
      for (uint32_t* link : {&graph_.ops[p].caused_by, &graph_.ops[p].runs_collective}) {
        if (*link == Op::kNoOp) continue;
        if (position.empty()) {
          position.resize(order.size());
          for (uint32_t q = 0; q < order.size(); ++q) position[order[q]] = q;
        }
        *link = position[*link];
      }
    }
  }

  int64_t location_bytes(uint32_t location) const { return trace_.locations[location].bytes; }

  uint32_t new_value(uint32_t location, uint32_t version, uint32_t producer, bool holds_data,
                     int16_t residency, int64_t begin, int64_t end) {
    Value value;
    value.location = location;
    value.version = version;
    value.offset = begin;
    value.bytes = saturating_sub(end, begin);
    value.producer_op = producer;
    value.freed_by_op = freed_by_[location];
    value.freed = freed_by_[location] != Value::kNoOp;
    value.holds_data = holds_data;
    auto position = static_cast<uint32_t>(graph_.values.size());
    graph_.values.push_back(value);
    if (trace_.locations[location].is_managed()) graph_.managed_residency.emplace_back(position, residency);
    return position;
  }

  // Version 0 appears the first time the location is touched (its
  // allocation, or first use of an unknown region), covering all of it.
  Pieces& state(uint32_t location, uint32_t op) {
    Pieces& pieces = pieces_[location];
    if (pieces.empty()) {
      // Managed memory is populated where it is first touched; without a
      // record of that, version 0 is taken to be on the host, whose
      // accesses the tracer cannot see.
      // A sub-allocation's version 0 comes from its allocation, which is no op.
      uint32_t producer = trace_.locations[location].sub_allocation_id ? Value::kNoOp : op;
      pieces.assign_one({0, new_value(location, 0, producer,
                                      trace_.locations[location].starts_with_data, kHostResidency,
                                      0, location_bytes(location))});
    }
    return pieces;
  }

  // Calls f(value, begin, end) for each value holding part of [begin, end)
  // of the location, with the part it holds.
  template <typename F>
  void for_each_overlap(uint32_t location, uint32_t op, int64_t begin, int64_t end, F&& f) {
    Pieces& pieces = state(location, op);
    int64_t bytes = location_bytes(location);
    auto it = std::upper_bound(pieces.begin(), pieces.end(), begin,
                               [](int64_t at, const Piece& p) { return at < p.begin; });
    if (it != pieces.begin()) --it;
    for (; it != pieces.end(); ++it) {
      // An empty range (an empty location's) touches the value holding it.
      if (begin == end) {
        f(it->value, begin, end);
        break;
      }
      if (it->begin >= end) break;
      int64_t piece_end = std::next(it) != pieces.end() ? std::next(it)->begin : bytes;
      int64_t from = std::max(begin, it->begin), to = std::min(end, piece_end);
      if (from < to) f(it->value, from, to);
    }
  }

  // [begin, end) of the location now holds `value`; the rest keeps what it held.
  void assign(uint32_t location, int64_t begin, int64_t end, uint32_t value) {
    Pieces& pieces = pieces_[location];
    int64_t bytes = location_bytes(location);
    if (begin <= 0 && end >= bytes) {
      pieces.assign_one({0, value});
      return;
    }
    if (end <= begin) return;
    auto first = std::upper_bound(pieces.begin(), pieces.end(), begin,
                                  [](int64_t at, const Piece& p) { return at < p.begin; });
    // `first - 1` holds `begin`; `last - 1` holds `end - 1`, and what it held
    // from `end` on stays.
    auto last = std::upper_bound(pieces.begin(), pieces.end(), end - 1,
                                 [](int64_t at, const Piece& p) { return at < p.begin; });
    uint32_t after = std::prev(last)->value;
    bool keep_after = end < bytes && (last == pieces.end() || last->begin > end);
    auto erase_from = std::prev(first)->begin < begin ? first : std::prev(first);
    auto at = pieces.erase(erase_from, last);
    at = pieces.insert(at, {begin, value});
    if (keep_after) pieces.insert(std::next(at), {end, after});
  }

  // Version 0 of device memory holds no data, unless its process issued,
  // since it was allocated, a kernel that may write memory the graph does not
  // see (arguments not captured, or reached through arrays of pointers).
  bool may_hold_data(uint32_t value) const {
    const Value& record = graph_.values[value];
    if (record.holds_data) return true;
    const Location& where = trace_.locations[record.location];
    auto unseen = unseen_writes_ns_.find(where.process);
    return unseen != unseen_writes_ns_.end() && unseen->second >= where.alloc_ns;
  }

  // Several kernel arguments (or an argument and an exact range) may reach
  // into the same location: one write per location, over the span they
  // cover together, and one read likewise, except that a certain read (an
  // exact range) is certain of its own bytes only: it joins only certain
  // reads it touches. A kernel's read-write access counts as a read and a
  // write here, so that a location's writes are one whatever each read: a
  // second write would find the op's own first one and carry from it.
  // Positioned (copy) accesses stay as they are.
  void merge_accesses(uint32_t source, OpKind kind) {
    accesses_.clear();
    uint32_t first = trace_.access_begin[source];
    auto position = std::lower_bound(trace_.positions.begin(), trace_.positions.end(), first,
                                     [](const AccessPosition& p, uint32_t access) { return p.access < access; });
    for (uint32_t i = first; i < trace_.access_begin[source + 1]; ++i) {
      AccessWithPosition access{trace_.accesses[i]};
      if (position != trace_.positions.end() && position->access == i) access.position = (position++)->position;
      accesses_.push_back(access);
      if (kind == OpKind::Kernel && access.position < 0 && access.reads && access.writes) {
        accesses_.back().writes = false;
        accesses_.push_back(access);
        accesses_.back().reads = false;
      }
    }
    if (accesses_.size() < 2) return;
    auto key = [](const Access& a) {
      return std::tuple<uint32_t, bool, bool, bool>(a.location, a.writes, a.reads,
                                                    a.reads && !a.writes && a.known_read);
    };
    std::stable_sort(accesses_.begin(), accesses_.end(), [&](const Access& a, const Access& b) {
      return std::tuple_cat(key(a), std::tie(a.begin)) < std::tuple_cat(key(b), std::tie(b.begin));
    });
    size_t kept = 0;
    for (size_t i = 0; i < accesses_.size(); ++i) {
      AccessWithPosition& previous = accesses_[kept > 0 ? kept - 1 : 0];
      const AccessWithPosition& next = accesses_[i];
      bool certain_read = next.reads && !next.writes && next.known_read;
      if (kept > 0 && previous.position < 0 && next.position < 0 &&
          key(previous) == key(next) && (!certain_read || next.begin <= previous.end)) {
        // Exact only when both were and no gap lies between them.
        previous.exact = previous.exact & next.exact & (next.begin <= previous.end);
        previous.begin = std::min(previous.begin, next.begin);
        previous.end = std::max(previous.end, next.end);
        previous.known_read = previous.known_read | next.known_read;
        previous.to_end = previous.to_end & next.to_end;
        previous.granule_rounded = previous.granule_rounded | next.granule_rounded;
      } else {
        accesses_[kept++] = next;
      }
    }
    accesses_.resize(kept);
  }

  // The op writing a location makes its next version, once per op.
  uint32_t next_version(uint32_t location, uint32_t op) {
    if (last_writer_[location] != op) {
      last_writer_[location] = op;
      ++version_[location];
    }
    return version_[location];
  }

  // Op `op` of the program order is trace op `source`.
  void apply(uint32_t op, uint32_t source) {
    graph_.op_listed_edges.push_back(static_cast<uint32_t>(graph_.listed_edges.size()));
    graph_.op_writes_begin.push_back(static_cast<uint32_t>(graph_.op_writes.size()));
    graph_.op_reads_begin.push_back(static_cast<uint32_t>(graph_.op_reads.size()));
    apply_accesses(op, source);
    choose_access_set(op);
  }

  // Whether op `op`, now applied, holds its possible reads and its writes
  // in an access set; its reads marked as possible stay so only then.
  void choose_access_set(uint32_t op) {
    Op& record = graph_.ops[op];
    uint32_t first = graph_.op_reads_begin[op];
    size_t possible = 0;
    for (size_t r = first; r < graph_.op_reads.size(); ++r) possible += graph_.op_reads_in_set[r];
    size_t writes = graph_.op_writes.size() - graph_.op_writes_begin[op];
    record.access_set = record.kind == OpKind::Kernel && possible + writes > kAccessSetValues &&
                        possible * writes > possible + writes;
    if (record.access_set) return;
    for (size_t r = first; r < graph_.op_reads.size(); ++r) graph_.op_reads_in_set[r] = false;
  }

  void apply_accesses(uint32_t op, uint32_t source) {
    Op& record = graph_.ops[op];
    merge_accesses(source, record.kind);

    if (is_lifetime_op(record.kind)) {
      bool ends = record.kind == OpKind::Free;
      for (const Access& access : accesses_) {
        Pieces& pieces = state(access.location, op);
        if (!ends) continue;
        freed_by_[access.location] = op;
        for (const Piece& piece : pieces) {
          graph_.values[piece.value].freed_by_op = op;
          graph_.values[piece.value].freed = true;
        }
      }
      return;
    }
    if (record.kind == OpKind::Migration) {
      migrate(op);
      return;
    }
    if (record.arguments_unknown || record.writes_unseen) {
      int64_t& latest = unseen_writes_ns_.try_emplace(record.process, INT64_MIN).first->second;
      latest = std::max(latest, record.issue_ns);
    }
    gather_reads(op, record);
    if (record.kind == OpKind::Collective) {
      exchange(op, record);
      return;
    }
    for (const AccessWithPosition& access : accesses_) {
      if (access.writes) write(op, record, access);
    }
  }

  // Whether a pointer's read (its extent assumed: to the end of its region)
  // reaches any data. A signature says that a kernel reads through the
  // pointer, not how far: where part of the extent holds data, the kernel may
  // have read only that part (a chunk copied in before the launch), so the
  // rest is a possible read, not a certain one.
  bool reaches_data(uint32_t op, const Access& access) {
    if (!access.to_end) return false;
    bool found = false;
    for_each_overlap(access.location, op, access.begin, access.end,
                     [&](uint32_t value, int64_t, int64_t) { found = found || may_hold_data(value); });
    return found;
  }

  // Whether [from, to) of a location holds a whole sanitizer granule.
  bool holds_a_whole_granule(uint32_t location, int64_t from, int64_t to) const {
    int64_t granule = trace_.exact_granule_bytes;
    int64_t base = trace_.locations[location].address;
    int64_t first = saturating_add(base, from), last = saturating_add(base, to);
    int64_t aligned = first % granule == 0 ? first : saturating_add(first - first % granule, granule);
    return saturating_add(aligned, granule) <= last;
  }

  void gather_reads(uint32_t op, Op& record) {
    reads_.clear();
    for (const AccessWithPosition& access : accesses_) {
      if (!access.reads) continue;
      bool certain = access.known_read && !reaches_data(op, access);
      for_each_overlap(access.location, op, access.begin, access.end,
                       [&](uint32_t value, int64_t from, int64_t to) {
                         int64_t bytes = saturating_sub(to, from);
                         int64_t position =
                             access.position < 0
                                 ? -1
                                 : saturating_add(access.position, saturating_sub(from, access.begin));
                         Read read{value, position, position < 0 ? -1 : saturating_add(position, bytes),
                                   false, bytes, certain};
                         if (may_hold_data(value)) {
                           reads_.push_back(read);
                         } else if (certain && (!access.granule_rounded ||
                                                holds_a_whole_granule(access.location, from, to))) {
                           // Memory nothing wrote holds nothing: only a certain
                           // read of it is worth an edge, and that edge is a bug report.
                           graph_.values[value].read_uninitialized = true;
                           record.reads_uninitialized = true;
                           read.uninitialized = true;
                           reads_.push_back(read);
                         }
                       });
    }
    // Each value once, possible unless some access read it for certain.
    size_t first = graph_.op_reads.size();
    for (const Read& read : reads_) {
      auto found = std::find(graph_.op_reads.begin() + first, graph_.op_reads.end(), read.value);
      if (found == graph_.op_reads.end()) {
        graph_.op_reads.push_back(read.value);
        graph_.op_reads_uninitialized.push_back(read.uninitialized);
        graph_.op_reads_in_set.push_back(!read.certain);
      } else if (read.certain) {
        graph_.op_reads_in_set[found - graph_.op_reads.begin()] = false;
      }
    }
  }

  // Bytes of `read` that went into the written range: by position for
  // linear copies (0: none), else the op's bytes.
  static int64_t bytes_along(const Op& record, const Read& read, const AccessWithPosition& write) {
    if (read.position_begin >= 0 && write.position >= 0) {
      int64_t from = std::max(read.position_begin, write.position);
      int64_t to = std::min(read.position_end,
                            saturating_add(write.position, saturating_sub(write.end, write.begin)));
      return std::max<int64_t>(0, saturating_sub(to, from));
    }
    if (record.kind == OpKind::Collective) return saturating_sub(write.end, write.begin);
    return record.bytes;
  }

  // A collective: every value read (each rank's send range) goes into one
  // exchanged value, which every write (each rank's receive range) comes
  // from: edges grow with the ranks, not with their square.
  void exchange(uint32_t op, const Op& record) {
    auto made = std::find_if(accesses_.begin(), accesses_.end(), [&](const Access& a) {
      return trace_.locations[a.location].exchanged;
    });
    if (made == accesses_.end()) return;
    uint32_t exchanged =
        new_value(made->location, 0, op, true, kNoResidency, 0, location_bytes(made->location));
    pieces_[made->location].assign_one({0, exchanged});
    graph_.op_writes.push_back(exchanged);
    for (const Read& read : reads_) {
      graph_.listed_edges.push_back(
          {read.value, exchanged, op, EdgeKind::Data, read.uninitialized, read.bytes});
    }
    reads_.assign(1, Read{exchanged, -1, -1, false, location_bytes(made->location), true});
    for (const AccessWithPosition& access : accesses_) {
      if (access.writes && &access != &*made) write(op, record, access);
    }
  }

  void write(uint32_t op, const Op& record, const AccessWithPosition& access) {
    // What the range held: the residency it continues, and what may survive.
    carried_.clear();
    int16_t residency = kHostResidency;
    bool first = true;
    for_each_overlap(access.location, op, access.begin, access.end,
                     [&](uint32_t value, int64_t, int64_t) {
                       if (first) residency = graph_.residency(value);
                       first = false;
                       if (std::find(carried_.begin(), carried_.end(), value) == carried_.end())
                         carried_.push_back(value);
                     });
    if (record.kind == OpKind::Kernel && record.device)
      residency = static_cast<int16_t>(*record.device);
    uint32_t written = new_value(access.location, next_version(access.location, op), op, true,
                                 residency, access.begin, access.end);
    graph_.op_writes.push_back(written);
    add_data_edges(op, record, access, written);
    // A write that may leave part of the range as it was depends on what was
    // there, unless it read that anyway or it held no data.
    if (!access.exact) {
      for (uint32_t previous : carried_) {
        bool read = std::any_of(reads_.begin(), reads_.end(),
                                [&](const Read& r) { return r.value == previous; });
        if (!read && may_hold_data(previous))
          graph_.listed_edges.push_back({previous, written, op, EdgeKind::Carry, false, -1});
      }
    }
    assign(access.location, access.begin, access.end, written);
  }

  // One edge per value read into `written`, with the bytes it gave. A
  // kernel's are every value it read, which the graph holds once for all its
  // writes (graph.h).
  void add_data_edges(uint32_t op, const Op& record, const AccessWithPosition& access, uint32_t written) {
    if (record.kind == OpKind::Kernel) return;
    sources_.clear();
    for (const Read& read : reads_) {
      int64_t bytes = bytes_along(record, read, access);
      if (bytes == 0) continue;
      auto same = std::find_if(sources_.begin(), sources_.end(),
                               [&](const Edge& e) { return e.src_value == read.value; });
      if (same == sources_.end()) {
        sources_.push_back({read.value, written, op, EdgeKind::Data, read.uninitialized, bytes});
      } else if (same->bytes >= 0 && bytes >= 0) {
        same->bytes = saturating_add(same->bytes, bytes);
      }
    }
    graph_.listed_edges.insert(graph_.listed_edges.end(), sources_.begin(), sources_.end());
  }

  // What a freed sub-allocation held when it went back to the pool ends
  // with it; work the GPU ran after the host freed it (a framework frees a
  // tensor as soon as the work using it is queued) included.
  void end_freed_sub_allocations() {
    for (uint32_t location = 0; location < pieces_.size(); ++location) {
      if (!trace_.locations[location].free_ns) continue;
      for (const Piece& piece : pieces_[location]) graph_.values[piece.value].freed = true;
    }
  }

  // A migration moves the location's current values: same content, same
  // versions, another residency.
  void migrate(uint32_t op) {
    const Op& record = graph_.ops[op];
    for (const Access& access : accesses_) {
      Pieces& pieces = state(access.location, op);
      int64_t moved_bytes = pieces.size() == 1 ? record.bytes : -1;
      for (Piece& piece : pieces) {
        const Value source = graph_.values[piece.value];
        uint32_t moved = new_value(access.location, source.version, op, source.holds_data,
                                   record.to, source.offset, saturating_add(source.offset, source.bytes));
        graph_.op_writes.push_back(moved);
        graph_.listed_edges.push_back({piece.value, moved, op, EdgeKind::Migration, false, moved_bytes});
        piece.value = moved;
      }
    }
  }

  OpAccesses trace_;
  Graph graph_;
  std::vector<Pieces> pieces_;  // per location: what it holds now
  std::vector<uint32_t> version_;           // per location: its latest version
  std::vector<uint32_t> last_writer_;       // per location: the op that made it
  std::vector<uint32_t> freed_by_;          // per location: the op that freed it
  // Per process: when the latest kernel so far that may write memory the
  // graph does not see was issued.
  std::unordered_map<ProcessId, int64_t> unseen_writes_ns_;
  std::vector<AccessWithPosition> accesses_;
  std::vector<Read> reads_;
  std::vector<uint32_t> carried_;
  std::vector<Edge> sources_;
};

}  // namespace

Graph build_graph(OpAccesses&& trace, const std::vector<uint32_t>& order) {
  return Builder(std::move(trace)).build(order);
}

Graph build_graph_from_trace(trace::Trace& source, KernelAccesses kernel_accesses,
                             Progress* progress, TraceRowsAfter rows_after) {
  show_phase(progress, "reading the operations");
  OpAccesses trace = find_op_accesses(source, kernel_accesses, rows_after);
  show_phase(progress, "ordering the operations");
  ProgramOrder order = program_order(trace);
  if (rows_after == TraceRowsAfter::Released) {
    // What ordered the streams lives in the rows.
    trace.stream_events = nullptr;
    trace.syncs = nullptr;
    source.release_rows();
  }
  show_phase(progress, "building the graph");
  Graph graph = build_graph(std::move(trace), order.ops);
  graph.broken_order_constraints = order.broken_constraints;
  graph.origin = source.origin();
  return graph;
}

}  // namespace apptracer::dvdg
