// The dynamic value dependence graph (docs/dvdg.md): values are (region,
// byte range, version), operations read and write them, edges go from each
// value an operation read to each value it wrote.
// A region ("location") is the finest thing the program allocated: a
// sub-allocation (a framework allocator's tensor block) where one is known,
// else an allocation or a host region.
//
// Everything is held in flat vectors indexed by 32-bit positions: a trace with
// a million kernels gives millions of values and edges, and the graph must fit
// comfortably in memory. Ids written to the database are position + 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/trace/operations.h"
#include "analyzer/trace/time_origin.h"
#include "analyzer/trace/unified_memory.h"
#include "apptracer/enums.h"

namespace apptracer::dvdg {

// The graph's ops are the trace model's operations (a sub-allocation's
// lifetime is no op: a training step has as many as kernels, and its
// sub_allocations row already says it).
using trace::OpKind;
using trace::ProcessId;
using trace::kHostResidency;

enum class EdgeKind : uint8_t {
  Data,   // the operation read the source value
  Carry,  // the operation may have left part of what it wrote as it was: that comes from the source
  Migration,  // the same content, moved to another residency (unified memory)
};
std::string_view to_string(EdgeKind kind);

// A memory region values live in: a sub-allocation (a block a framework's
// allocator carved out of an allocation), an allocation, or an address the
// tracer could not attribute to one (an "unknown region", typically host
// memory).
struct Location {
  Location() : starts_with_data(true), exchanged(false) {}

  trace::NullableInt alloc_id;          // a sub-allocation's: its parent's
  trace::NullableInt sub_allocation_id;
  int64_t alloc_ns = 0;                 // when allocated (a sub-allocation's block: handed out)
  trace::NullableInt free_ns;           // ... and back in the pool
  int64_t address = 0;
  int64_t bytes = 0;
  trace::NullableInt device;
  // The rest in the last 8 bytes: a training trace has a location per
  // tensor block, over a million.
  // A merged trace's process: ranks' address spaces overlap, so an address
  // means something per process.
  ProcessId process = trace::kSingleProcess;
  std::optional<AllocKind> alloc_kind;    // allocations (and sub-allocations': the parent's)
  std::optional<SubAllocator> allocator;  // sub-allocations only
  MemoryKind memory = MemoryKind::Unknown;
  // Device memory holds no data until something writes it; host memory may
  // have been written by CPU code the tracer cannot see.
  bool starts_with_data : 1;
  // No memory: what a collective combined from every rank's send buffer and
  // wrote into every rank's receive buffer (one value, so a collective has
  // edges per rank rather than per pair of ranks).
  bool exchanged : 1;
  // Managed memory: its values also say where they reside.
  bool is_managed() const { return alloc_kind == AllocKind::Managed; }
};
static_assert(sizeof(Location) == 64);

// Where a value of managed memory resides: a device ordinal, or the host
// (kHostResidency). Values of other memory have none.
inline constexpr int16_t kNoResidency = INT16_MIN;

// Bits of a location's position where the graph's millions of values and
// accesses hold it beside their flags.
inline constexpr uint32_t kLocationBits = 26;

// An operation of the trace, with what the graph adds to it.
struct Op : trace::Operation {
  bool reads_uninitialized = false;
  // A kernel with no kernel_args rows (arguments not captured): what it read
  // and wrote is missing from the graph.
  bool arguments_unknown = false;
  // A kernel that may write memory its arguments do not point at (through
  // arrays of pointers): memory nothing visibly wrote may hold its data.
  bool writes_unseen = false;
  // Migrations: from and to which residency (here, where the struct has room).
  int16_t from = kNoResidency;
  int16_t to = kNoResidency;
  uint8_t migration_cause = 0;  // migrations: enum um_migration_cause
  // Collectives and messages: what the ranks called (messages: Send, or Recv
  // when only the receiver is in the trace).
  CollectiveKind collective_kind = CollectiveKind::AllReduce;
  static constexpr uint32_t kNoOp = UINT32_MAX;
  // Migrations GPU work (kernel, copy, memset) or a host phase caused: the op
  // they are placed right before (a position into the trace's ops, then,
  // once built, in program order). Prefetches are migrations ordered by their
  // own stream instead.
  uint32_t caused_by = kNoOp;
  // An NCCL kernel: the collective or message op it ran (a trace position,
  // then a program-order one), which says what it read and wrote instead of
  // its arguments.
  uint32_t runs_collective = kNoOp;
  // Collectives and messages: ranks taking part that have no row in the
  // trace (a single rank's trace, a rank whose trace was not merged).
  int16_t ranks_missing = 0;
  // A kernel whose possible accesses reach many values: its data edges from
  // them go through one access set (Graph says how).
  bool access_set = false;
};

// Held by the million (a few per kernel launch), hence the bit fields and
// the residency kept beside them (Graph::residency), as few values have one.
struct Value {
  Value() : location(0), freed(false), holds_data(true), read_uninitialized(false) {}

  uint32_t location : kLocationBits;
  bool freed : 1;  // its region was freed (a sub-allocation's: no op, see free_ns)
  bool holds_data : 1;
  bool read_uninitialized : 1;  // a known read found it holding no data
  uint32_t version = 0;  // per location: 0 when allocated, +1 per operation writing it
  int64_t offset = 0;    // the value's byte range inside its location
  int64_t bytes = 0;
  static constexpr uint32_t kNoOp = UINT32_MAX;
  // The op that wrote it (for version 0 the allocation, or the first op to
  // touch an unknown region; none for a sub-allocation's).
  uint32_t producer_op = kNoOp;
  uint32_t freed_by_op = kNoOp;  // the free that ended it, if an op did
};
static_assert(sizeof(Value) == 32);

// An end of a held edge that is no value: its op's access set.
inline constexpr uint32_t kAccessSet = UINT32_MAX;

struct Edge {
  uint32_t src_value = 0;
  uint32_t dst_value = 0;
  uint32_t op = 0;
  EdgeKind kind = EdgeKind::Data;
  bool uninitialized_read = false;
  int64_t bytes = -1;  // bytes moved along the edge; -1 when unknown (kernels)
};

// A kernel's data edges are not held one by one: it read some values and
// wrote others, and an edge goes from each value it read to each value it
// wrote, so they are op_reads x op_writes. (A PyTorch optimizer step's
// multi-tensor kernels read and write hundreds of tensors each: held one by
// one, their edges were 97% of a training trace's graph, 20 million of them
// for 100 steps.) Every other edge is listed.
//
// The graph has two sets of edges. Its dependences (for_each_edge,
// dependence_count) are every pair a written value depends on, as above.
// Its held edges (for_each_held_edge, edge_count) are what it says, exports
// draw and the summary counts: the same, except for a kernel with an access
// set (Op::access_set). Such a kernel may read or write many values through
// accesses nothing says it made (pointer arrays of foreach kernels, extents
// assumed to a region's end), and its dependences would be the square of
// them: its possible reads each have one edge into the set, and the set one
// edge to each value it wrote; its certain reads keep an edge to each value
// it wrote. Both say the same thing: a value it wrote depends on every value
// it read.
// The ops and the locations they touch, as the graph's build finds them
// (OpAccesses, ops in trace order) and as the graph holds them (in program
// order): what an analysis that needs no values (the memory view) reads
// from either.
struct OpTable {
  std::vector<Location> locations;
  std::vector<Op> ops;
  // Kernel names by strings.id, for labels.
  std::unordered_map<int64_t, std::string> names;
};

struct Graph : OpTable {
  // ops: in program order
  std::vector<Value> values;
  // Where each value of managed memory resides, by value.
  std::vector<std::pair<uint32_t, int16_t>> managed_residency;
  // The edges held one by one, grouped by op in program order:
  // op_listed_edges[i] .. op_listed_edges[i + 1] are op i's.
  std::vector<Edge> listed_edges;
  std::vector<uint32_t> op_listed_edges;
  // op_writes_begin[i] .. op_writes_begin[i + 1] index op_writes: values op i wrote.
  std::vector<uint32_t> op_writes_begin;
  std::vector<uint32_t> op_writes;
  // The same for the values op i read (also an op that wrote nothing), each
  // once, with whether the read found it holding no data (a kernel's data
  // edges from it say so) and whether it is a possible read its op's access
  // set holds.
  std::vector<uint32_t> op_reads_begin;
  std::vector<uint32_t> op_reads;
  std::vector<bool> op_reads_uninitialized;
  std::vector<bool> op_reads_in_set;
  // What the times it shows count from (ops keep the trace's clock, as stored).
  trace::TimeOrigin origin;
  // Cross-rank ordering constraints broken to place every op (program_order.h).
  size_t broken_order_constraints = 0;

  // Calls f(const Edge&) for each dependence of op `op`: for each value it
  // wrote, the edges into it.
  template <typename F>
  void for_each_edge(uint32_t op, F&& f) const {
    uint32_t listed = op_listed_edges[op], listed_end = op_listed_edges[op + 1];
    if (ops[op].kind == OpKind::Kernel) {
      for (uint32_t w = op_writes_begin[op]; w < op_writes_begin[op + 1]; ++w) {
        for (uint32_t r = op_reads_begin[op]; r < op_reads_begin[op + 1]; ++r) {
          f(Edge{op_reads[r], op_writes[w], op, EdgeKind::Data, op_reads_uninitialized[r], -1});
        }
        for (; listed < listed_end && listed_edges[listed].dst_value == op_writes[w]; ++listed)
          f(listed_edges[listed]);
      }
    }
    for (; listed < listed_end; ++listed) f(listed_edges[listed]);
  }
  // Every dependence, by op in program order.
  template <typename F>
  void for_each_edge(F&& f) const {
    for (uint32_t op = 0; op < ops.size(); ++op) for_each_edge(op, f);
  }
  // Calls f(op, location, writes) for each value each op read (writes
  // false) and wrote (true), by op in program order.
  template <typename F>
  void for_each_location_use(F&& f) const {
    for (uint32_t op = 0; op < ops.size(); ++op) {
      for (uint32_t r = op_reads_begin[op]; r < op_reads_begin[op + 1]; ++r) f(op, values[op_reads[r]].location, false);
      for (uint32_t w = op_writes_begin[op]; w < op_writes_begin[op + 1]; ++w) f(op, values[op_writes[w]].location, true);
    }
  }
  // The dependences of op `op` into `value`, one of the values it wrote, in
  // for_each_edge's order, without going through the others.
  template <typename F>
  void for_each_edge_into(uint32_t op, uint32_t value, F&& f) const {
    if (ops[op].kind == OpKind::Kernel) {
      for (uint32_t r = op_reads_begin[op]; r < op_reads_begin[op + 1]; ++r)
        f(Edge{op_reads[r], value, op, EdgeKind::Data, op_reads_uninitialized[r], -1});
    }
    for (uint32_t i = op_listed_edges[op]; i < op_listed_edges[op + 1]; ++i) {
      if (listed_edges[i].dst_value == value) f(listed_edges[i]);
    }
  }
  // Calls f(const Edge&) for each held edge of op `op`: its dependences,
  // unless it has an access set; then for each value it wrote its certain
  // reads' edges and carries into it, then each possible read's edge into
  // the set (dst_value kAccessSet), then the set's edge to each value it
  // wrote (src_value kAccessSet).
  template <typename F>
  void for_each_held_edge(uint32_t op, F&& f) const {
    if (!ops[op].access_set) {
      for_each_edge(op, f);
      return;
    }
    uint32_t listed = op_listed_edges[op], listed_end = op_listed_edges[op + 1];
    for (uint32_t w = op_writes_begin[op]; w < op_writes_begin[op + 1]; ++w) {
      for (uint32_t r = op_reads_begin[op]; r < op_reads_begin[op + 1]; ++r) {
        if (!op_reads_in_set[r])
          f(Edge{op_reads[r], op_writes[w], op, EdgeKind::Data, op_reads_uninitialized[r], -1});
      }
      for (; listed < listed_end && listed_edges[listed].dst_value == op_writes[w]; ++listed)
        f(listed_edges[listed]);
    }
    for (; listed < listed_end; ++listed) f(listed_edges[listed]);
    for (uint32_t r = op_reads_begin[op]; r < op_reads_begin[op + 1]; ++r) {
      if (op_reads_in_set[r]) f(Edge{op_reads[r], kAccessSet, op, EdgeKind::Data, false, -1});
    }
    for (uint32_t w = op_writes_begin[op]; w < op_writes_begin[op + 1]; ++w)
      f(Edge{kAccessSet, op_writes[w], op, EdgeKind::Data, false, -1});
  }
  // Every held edge, by op in program order.
  template <typename F>
  void for_each_held_edge(F&& f) const {
    for (uint32_t op = 0; op < ops.size(); ++op) for_each_held_edge(op, f);
  }
  // Where value `value` resides: kNoResidency unless it is of managed memory.
  int16_t residency(uint32_t value) const;
  // The held edges, and the dependences they stand for.
  size_t edge_count() const;
  size_t dependence_count() const;
  size_t access_set_count() const;
};

}  // namespace apptracer::dvdg
