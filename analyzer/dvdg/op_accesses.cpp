#include "analyzer/dvdg/op_accesses.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analyzer/trace/collectives.h"
#include "analyzer/trace/exact_accesses.h"
#include "analyzer/trace/exact_coverage.h"
#include "analyzer/trace/migration_groups.h"
#include "apptracer/saturating.h"
#include "apptracer/signature.h"
#include "analyzer/dvdg/block_resolution.h"
#include "analyzer/dvdg/strided_pointers.h"

namespace apptracer::dvdg {

namespace {

using trace::NullableInt;
using trace::Packed;

class AccessFinder {
 public:
  AccessFinder(trace::Trace& trace, KernelAccesses kernel_accesses, TraceRowsAfter rows_after)
      : trace_(trace), ops_(trace.operations()), kernel_accesses_(kernel_accesses), rows_after_(rows_after) {}

  OpAccesses find() {
    reserve();
    read_allocations();
    read_sub_allocations();
    // 186 MB at 1.46M blocks, not held beside the accesses found next.
    if (rows_after_ != TraceRowsAfter::Kept) trace_.release<SubAllocationRow>();
    read_copies();
    read_memsets();
    read_kernels();
    read_collectives();
    if (kernel_accesses_ == KernelAccesses::Exact) {
      exact_ = trace::ExactAccesses::read(trace_);
      out_.exact_granule_bytes = std::max<int64_t>(1, std::atoll(trace_.meta("exact.granularity_bytes").c_str()));
    }
    read_migrations();
    out_.stream_events = &trace_.rows<StreamEventRow>();
    out_.syncs = &ops_.syncs();
    add_kernel_accesses();
    // Exact ranges first: they are split by the tensors they touch too.
    add_exact_accesses();
    holds_blocks_.resize(out_.locations.size(), false);
    split_by_blocks_per_process();
    group_accesses();
    return std::move(out_);
  }

 private:
  // The big vectors grow once: with millions of rows, repeated growth costs
  // as much as reading them.
  void reserve() {
    size_t allocations = ops_.allocations().size();
    size_t copies = ops_.copies().size();
    size_t memsets = ops_.memsets().size();
    size_t kernels = ops_.kernels().size();
    size_t blocks = trace_.rows<SubAllocationRow>().size();
    out_.ops.reserve(2 * allocations + copies + memsets + kernels);
    // Kernels' accesses are reserved where their words are counted: room
    // for them here too was held twice while that copy was made.
    pending_.reserve(2 * allocations + 2 * copies + memsets);
    pending_positions_.reserve(pending_.capacity());
    // Locations: allocations, blocks, and the unknown regions copies and
    // memsets reach (at most two each), and a collective's rank calls (two
    // each, and one exchanged value).
    size_t collective_calls = trace_.rows<CollectiveRow>().size();
    out_.locations.reserve(allocations + blocks + 2 * (copies + memsets) + 3 * collective_calls);
    kernel_ids_.reserve(kernels);
    kernel_ops_.reserve(kernels);
  }

  uint32_t add_op(const Op& op) {
    out_.ops.push_back(op);
    return static_cast<uint32_t>(out_.ops.size() - 1);
  }

  // position: where a linear copy's access starts in the copied bytes (0),
  // -1 for any other access.
  void add_access(uint32_t op, Access access, int64_t position = -1) {
    access.op = op;
    pending_.push_back(access);
    pending_positions_.push_back(position);
  }

  // The whole of a location: what allocations and frees make and end.
  Access whole(uint32_t location) const {
    Access access;
    access.location = location;
    access.end = out_.locations[location].bytes;
    return access;
  }

  uint32_t add_location(const Location& location) {
    if (out_.locations.size() >= (size_t{1} << kLocationBits))
      throw std::runtime_error("more memory regions than the DVDG can hold");
    out_.locations.push_back(location);
    return static_cast<uint32_t>(out_.locations.size() - 1);
  }

  void read_allocations() {
    for (const trace::Allocation& alloc : ops_.allocations()) {
      Location location;
      location.alloc_id = alloc.id();
      location.address = alloc.address();
      location.bytes = alloc.bytes();
      location.device = alloc.device();
      location.alloc_kind = alloc.kind();
      location.memory = memory_kind_of(alloc.kind());
      location.starts_with_data = !is_device_memory(location.memory);
      location.process = alloc.process();
      location.alloc_ns = alloc.alloc_ns();
      uint32_t index = add_location(location);
      alloc_locations_.emplace(alloc.id(), index);
      add_lifetime(index, alloc.alloc_ns(), alloc.free_ns());
    }
  }

  // The allocation and (if it happened) free ops of a location.
  void add_lifetime(uint32_t location, int64_t alloc_ns, NullableInt free_ns) {
    Op alloc;
    alloc.kind = OpKind::Allocation;
    alloc.source_id = *out_.locations[location].alloc_id;
    alloc.device = out_.locations[location].device;
    alloc.process = out_.locations[location].process;
    alloc.issue_ns = alloc.start_ns = alloc.end_ns = alloc_ns;
    alloc.bytes = out_.locations[location].bytes;
    add_access(add_op(alloc), whole(location));
    if (free_ns) {
      Op free = alloc;
      free.kind = OpKind::Free;
      free.issue_ns = free.start_ns = free.end_ns = *free_ns;
      add_access(add_op(free), whole(location));
    }
  }

  // Blocks framework allocators carved out of allocations (absent from
  // traces recorded before they were captured). Each is a location of its
  // own, whose lifetime is its row's (no ops); accesses to the allocations
  // holding them are split later.
  void read_sub_allocations() {
    holds_blocks_.assign(out_.locations.size(), false);
    // Allocations by address, to mark those a block lies in (a block of an
    // expandable segment may span several of its mappings).
    std::vector<std::pair<int64_t, uint32_t>> by_address;
    for (uint32_t i = 0; i < out_.locations.size(); ++i)
      by_address.emplace_back(out_.locations[i].address, i);
    std::sort(by_address.begin(), by_address.end());
    int64_t widest = 0;
    for (const Location& location : out_.locations) widest = std::max(widest, location.bytes);

    for (const Packed<SubAllocationRow>& row : trace_.rows<SubAllocationRow>()) {
      Location location;
      location.sub_allocation_id = row.id;
      location.allocator = row.allocator;
      location.alloc_id = row.parent_alloc_id;
      location.address = row.address;
      location.bytes = row.bytes;
      location.device = row.device;
      location.memory = MemoryKind::Device;
      location.process = row.process;
      if (location.alloc_id) {
        auto parent = alloc_locations_.find(*location.alloc_id);
        if (parent != alloc_locations_.end()) {
          location.alloc_kind = out_.locations[parent->second].alloc_kind;
          location.memory = out_.locations[parent->second].memory;
        }
      }
      location.starts_with_data = !is_device_memory(location.memory);
      location.alloc_ns = row.alloc_ns;
      location.free_ns = row.free_ns;
      uint32_t index = add_location(location);
      blocks_.push_back({index, location.process, location.address, location.bytes, location.alloc_ns,
                         location.free_ns.value_or(INT64_MAX)});
      // Every allocation overlapping the block holds it.
      auto it = std::lower_bound(by_address.begin(), by_address.end(),
                                 std::make_pair(saturating_sub(location.address, widest), uint32_t{0}));
      for (; it != by_address.end() && it->first < saturating_add(location.address, location.bytes); ++it) {
        const Location& candidate = out_.locations[it->second];
        if (candidate.process == location.process &&
            saturating_add(candidate.address, candidate.bytes) > location.address)
          holds_blocks_[it->second] = true;
      }
    }
    holds_blocks_.resize(out_.locations.size(), false);
  }

  // The location of a copy's or memset's end: its allocation, or the
  // unknown region starting at its address.
  std::optional<uint32_t> endpoint(const trace::Endpoint& end, ProcessId process) {
    return endpoint(end.alloc, end.address, end.span, end.memory, end.device, process);
  }

  std::optional<uint32_t> endpoint(NullableInt alloc_id, NullableInt address, int64_t bytes,
                                   MemoryKind memory, NullableInt device, ProcessId process) {
    if (alloc_id) {
      auto found = alloc_locations_.find(*alloc_id);
      if (found != alloc_locations_.end()) return found->second;
    }
    if (!address) return std::nullopt;
    auto found = unknown_locations_.find({process, *address});
    if (found == unknown_locations_.end()) {
      Location location;
      location.address = *address;
      location.memory = memory;
      location.device = device;
      location.process = process;
      found = unknown_locations_.emplace(std::make_pair(process, *address), add_location(location))
                  .first;
    }
    Location& location = out_.locations[found->second];
    location.bytes = std::max(location.bytes, bytes);
    return found->second;
  }

  // A copy's or memset's bytes in its location: from its offset (0 for an
  // unknown region, which starts where the copy does).
  Access range(uint32_t location, NullableInt offset, int64_t span) const {
    Access access;
    access.location = location;
    access.begin = out_.locations[location].alloc_id ? offset.value_or(0) : 0;
    access.end = saturating_add(access.begin, span);
    return access;
  }

  void read_copies() {
    for (const trace::Transfer& copy : ops_.copies()) {
      Op op;
      static_cast<trace::Operation&>(op) = copy.operation();
      // A prefetch moves managed memory without changing what it holds: it
      // becomes a migration op for each direction it moved bytes in, if any.
      if (op.kind == OpKind::Prefetch) {
        prefetches_.emplace(op.source_id, op);
        continue;
      }
      bool linear = copy.linear();
      trace::Endpoint source = copy.source();
      trace::Endpoint destination = copy.destination();
      std::optional<uint32_t> src = endpoint(source, op.process);
      std::optional<uint32_t> dst = endpoint(destination, op.process);
      uint32_t index = add_op(op);
      if (src) {
        Access read = range(*src, source.offset, source.span);
        read.reads = read.known_read = true;
        add_access(index, read, linear ? 0 : -1);
      }
      if (dst) {
        Access write = range(*dst, destination.offset, destination.span);
        write.writes = true;
        write.exact = linear;
        add_access(index, write, linear ? 0 : -1);
      }
    }
  }

  void read_memsets() {
    for (const trace::Transfer& memset : ops_.memsets()) {
      trace::Endpoint destination = memset.destination();
      std::optional<uint32_t> dst = endpoint(destination, memset.process());
      Op op;
      static_cast<trace::Operation&>(op) = memset.operation();
      uint32_t index = add_op(op);
      if (dst) {
        Access write = range(*dst, destination.offset, destination.span);
        write.writes = write.exact = true;
        add_access(index, write);
      }
    }
  }

  // A launch whose arguments were read has a set, empty when none of its
  // words points into an allocation; its accesses are added once every op
  // is read (a collective's NCCL kernel has none of its own).
  void read_kernels() {
    const trace::KernelArguments& arguments = trace_.kernel_arguments();
    for (const trace::Kernel& kernel : ops_.kernels()) {
      Op op;
      static_cast<trace::Operation&>(op) = kernel.operation();
      op.arguments_unknown = !arguments.captured(*kernel.row);
      kernel_ids_.push_back(op.source_id);
      kernel_ops_.push_back(add_op(op));
      if (op.name_id != 0) out_.names.emplace(op.name_id, std::string());
    }
    for (auto& [id, name] : out_.names) name = std::string(trace_.string(id));
    std::unordered_map<int64_t, bool> writes_unseen;  // by name
    for (uint32_t kernel : kernel_ops_) {
      Op& op = out_.ops[kernel];
      if (op.name_id == 0) continue;
      auto [known, inserted] = writes_unseen.emplace(op.name_id, false);
      if (inserted) known->second = reaches_through_pointer_arrays(out_.names.at(op.name_id));
      op.writes_unseen = known->second;
    }
  }

  // A parameter that points to writable pointers (PyTorch's
  // split_with_sizes_copy_out takes its destination tensors as char**):
  // what the kernel writes through them is not in its arguments.
  static bool reaches_through_pointer_arrays(const std::string& demangled) {
    std::optional<std::vector<std::string>> types = parameter_types(demangled);
    return types && std::any_of(types->begin(), types->end(), [](const std::string& type) {
             return points_to_writable_pointers(type);
           });
  }

  // One op per NCCL/MPI operation (docs/dvdg.md): a collective reads every
  // rank's send range and writes every rank's receive range through one
  // exchanged value (graph_builder); a message reads the sender's buffer and
  // writes the receiver's, byte by byte. On streams (NCCL) the op sits in
  // its first rank's lane and the other ranks' calls order it against their
  // own lanes; on the host (MPI) every rank's call orders it. The
  // NCCL kernel that ran a call stays an op (its time, its stream) without
  // accesses of its own: the collective says what it read and wrote.
  void read_collectives() {
    for (const std::vector<trace::CollectiveCall>& calls : trace::read_collective_operations(trace_)) {
      const trace::CollectiveCall& first = calls.front();
      bool message = is_point_to_point(first.kind);
      Op op;
      op.kind = message ? OpKind::Message : OpKind::Collective;
      op.collective_kind = first.kind;
      op.source_id = first.id;
      op.device = first.device;
      op.stream = first.stream;
      op.process = first.process;
      trace::set_times(op, first.api_start_ns, first.gpu_start_ns, first.gpu_end_ns);
      int64_t expected = message ? 2 : first.nranks;
      op.ranks_missing = static_cast<int16_t>(
          std::clamp<int64_t>(expected - static_cast<int64_t>(calls.size()), 0, INT16_MAX));
      // What it delivered: the receive buffers (a send whose receiver is not
      // traced: what it sent), so no byte counts twice.
      int64_t received = 0, sent = 0, widest = 0;
      for (const trace::CollectiveCall& call : calls) {
        if (call.recv) received = saturating_add(received, call.recv->bytes);
        if (call.send) sent = saturating_add(sent, call.send->bytes);
        widest = std::max({widest, call.send ? call.send->bytes : 0, call.recv ? call.recv->bytes : 0});
      }
      op.bytes = received > 0 ? received : sent;
      uint32_t index = add_op(op);
      for (const trace::CollectiveCall& call : calls) {
        uint32_t kernel = call.kernel_id ? kernel_op(*call.kernel_id).value_or(Op::kNoOp) : Op::kNoOp;
        if (&call != &first || !first.stream) {
          bool receives = !message || call.recv.has_value();
          out_.rank_calls.push_back({index, call.process, call.device, call.stream, call.api_start_ns,
                                     call.host_done_ns, receives, kernel});
        }
        add_buffer_access(index, call, call.send, false, message);
        add_buffer_access(index, call, call.recv, true, message);
        if (kernel != Op::kNoOp && out_.ops[kernel].runs_collective == Op::kNoOp) {
          out_.ops[kernel].runs_collective = index;
          out_.ops[kernel].arguments_unknown = false;
        }
      }
      if (message) continue;
      Location exchanged;
      exchanged.exchanged = true;
      exchanged.bytes = widest;
      exchanged.process = first.process;
      Access made = whole(add_location(exchanged));
      made.writes = made.exact = true;
      add_access(index, made);
    }
  }

  // A send buffer is read for certain; a receive buffer written whole.
  // Messages pair bytes by position, as copies do.
  void add_buffer_access(uint32_t op, const trace::CollectiveCall& call,
                         const std::optional<trace::BufferRange>& buffer, bool written,
                         bool positioned) {
    if (!buffer || buffer->bytes <= 0) return;
    std::optional<uint32_t> location = endpoint(buffer->alloc_id, buffer->address, buffer->bytes,
                                                MemoryKind::Unknown, call.device, call.process);
    if (!location) return;
    Access access = range(*location, buffer->offset, buffer->bytes);
    access.reads = access.known_read = !written;
    access.writes = access.exact = written;
    add_access(op, access, positioned ? 0 : -1);
  }

  // The op of a kernel row; kernel ids are usually consecutive, so the
  // position is found directly, else by binary search.
  std::optional<uint32_t> kernel_op(int64_t kernel_id) const {
    if (kernel_ids_.empty()) return std::nullopt;
    int64_t first = kernel_ids_.front();
    int64_t position = saturating_sub(kernel_id, first);
    if (kernel_id >= first && position < static_cast<int64_t>(kernel_ids_.size()) &&
        kernel_ids_[position] == kernel_id) {
      return kernel_ops_[position];
    }
    auto found = std::lower_bound(kernel_ids_.begin(), kernel_ids_.end(), kernel_id);
    if (found == kernel_ids_.end() || *found != kernel_id) return std::nullopt;
    return kernel_ops_[found - kernel_ids_.begin()];
  }

  // A kernel's pointer arguments: each reaches from where it points to the
  // end of its allocation (split by the blocks in it later), or one stride
  // where its launches step through a buffer (strided_pointers.h).
  void add_kernel_accesses() {
    const trace::KernelArguments& arguments = trace_.kernel_arguments();
    const std::vector<trace::Kernel>& kernels = ops_.kernels();
    // At most one access per word into an allocation: a training trace's
    // millions grow the vector once, not by doubling.
    size_t most = 0;
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (out_.ops[kernel_ops_[i]].runs_collective != Op::kNoOp) continue;
      trace::KernelArguments::Words words = arguments.of(*kernels[i].row);
      most += static_cast<size_t>(
          std::count_if(words.begin(), words.end(), [](const trace::KernelWord& word) { return word.alloc_id.has_value(); }));
    }
    pending_.reserve(pending_.size() + most);
    pending_positions_.reserve(pending_.capacity());
    StridedPointers strided;
    for (size_t i = 0; i < kernels.size(); ++i) {
      uint32_t kernel = kernel_ops_[i];
      if (out_.ops[kernel].runs_collective != Op::kNoOp) continue;
      const auto& row = *kernels[i].row;
      trace::KernelArguments::Words words = arguments.of(row);
      const trace::KernelExact* exact = exact_.of(row.id);
      std::optional<trace::LaunchCoverage> coverage;
      if (exact) coverage = trace::coverage_of(*exact, words);
      for (const trace::KernelWord& word : words) {
        if (!word.alloc_id) continue;
        // Where the sanitizer saw all the launch did, its ranges say it instead.
        if (coverage && coverage->in(word.alloc_id) == ExactCoverage::Exact) continue;
        auto location = alloc_locations_.find(*word.alloc_id);
        if (location == alloc_locations_.end()) continue;
        Access access = whole(location->second);
        access.begin = std::clamp<int64_t>(word.alloc_offset, 0, access.end);
        access.to_end = true;
        // An argument of unknown access is assumed read-write (docs/dvdg.md).
        access.reads = word.access != AccessKind::Write;
        access.writes = word.access != AccessKind::Read;
        access.known_read = (word.access == AccessKind::Read ||
                             (word.access == AccessKind::ReadWrite &&
                              word.source != AccessSource::Assumed && word.source != AccessSource::None)) &&
                            !updated_in_place(words, word);
        add_access(kernel, access);
        if (row.name_id) {
          strided.see(*row.name_id, word.offset, *word.alloc_id, access.begin,
                      pending_.size() - 1, pending_);
        }
      }
    }
  }

  // A read-only pointer equal to one the kernel may write through: an
  // in-place update, which BLAS-style calls with a zero scale (beta = 0) make
  // without reading (cuBLAS scales a split-K GEMM's output by 0 first, its
  // input and output the same pointer), so the read is possible, not certain.
  static bool updated_in_place(const trace::KernelArguments::Words& words, const trace::KernelWord& read) {
    if (read.access != AccessKind::Read) return false;
    return std::any_of(words.begin(), words.end(), [&](const trace::KernelWord& other) {
      return other.access != AccessKind::Read && other.alloc_id == read.alloc_id &&
             other.alloc_offset == read.alloc_offset;
    });
  }

  // --exact (access_source sanitizer): each range a kernel really read or
  // wrote, as it did. A read is certain only where the sanitizer saw
  // everything the launch did (exact_coverage.h): elsewhere a tensor copy it
  // cannot see may have written those bytes first, and the arguments'
  // accesses stand beside the ranges (add_kernel_accesses). Reads stay one
  // access per range, so a read is certain of the bytes it read, not of the
  // tensors between two ranges of one allocation. A write replaces its
  // range unless it is a bound from an overflowed table.
  void add_exact_accesses() {
    const trace::KernelArguments& arguments = trace_.kernel_arguments();
    for (const auto& [kernel_id, exact] : exact_.kernels()) {
      std::optional<uint32_t> kernel = kernel_op(kernel_id);
      const trace::Kernel* launch = ops_.kernel(kernel_id);
      if (!kernel || !launch) continue;
      Op& op = out_.ops[*kernel];
      if (op.runs_collective != Op::kNoOp) continue;
      trace::LaunchCoverage coverage = trace::coverage_of(exact, arguments.of(*launch->row));
      // A launch seen whole wrote nothing its ranges do not show. One that
      // copies through tensor maps none of whose addresses resolved may have
      // written any memory.
      if (coverage.launch == ExactCoverage::Exact) op.arguments_unknown = false;
      if (exact.incomplete == ExactGap::TensorCopies && coverage.pointers.empty()) op.writes_unseen = true;
      for (const trace::ExactAccess& range : exact.accesses) {
        std::optional<uint32_t> location = endpoint(range.alloc_id, range.lo, range.hi - range.lo,
                                                    MemoryKind::Unknown, op.device, op.process);
        if (!location) continue;
        const Location& where = out_.locations[*location];
        Access access;
        access.location = *location;
        access.reads = range.access == AccessKind::Read || range.access == AccessKind::ReadWrite;
        access.writes = range.access == AccessKind::Write || range.access == AccessKind::ReadWrite;
        access.known_read = access.reads && !range.approximate &&
                            coverage.in(range.alloc_id) == ExactCoverage::Exact;
        access.begin = std::max<int64_t>(0, saturating_sub(range.lo, where.address));
        access.end = std::min<int64_t>(where.bytes, saturating_sub(range.hi, where.address));
        if (access.end <= access.begin) continue;
        access.exact = access.writes && !range.approximate;
        access.granule_rounded = true;
        add_access(*kernel, access);
      }
    }
  }

  // One migration op per group of unified-memory migrations. Those GPU work
  // or a host phase caused are placed right before it (program_order); a
  // prefetch's take the prefetch's place on its stream.
  void read_migrations() {
    const trace::UmTrace& um = trace_.unified_memory();
    std::vector<uint32_t> host_phase_ops(um.host_phases.size(), Op::kNoOp);
    for (const trace::MigrationGroup& group : trace::group_migrations(um)) {
      auto location = alloc_locations_.find(group.alloc_id);
      if (location == alloc_locations_.end() || !out_.locations[location->second].is_managed())
        continue;
      Op op;
      op.source_id = group.cause.row;
      op.issue_ns = op.start_ns = group.start_ns;
      op.end_ns = group.end_ns;
      // The device whose memory it moved in or out (`--device` shows it).
      op.device = group.to != kHostResidency ? group.to : group.from;
      op.process = out_.locations[location->second].process;
      switch (group.cause.kind) {
        case trace::UmCauseKind::Prefetch: {
          auto prefetch = prefetches_.find(group.cause.row);
          if (prefetch == prefetches_.end()) continue;
          op = prefetch->second;
          op.start_ns = std::max(op.issue_ns, group.start_ns);
          op.end_ns = std::max(op.start_ns, group.end_ns);
          break;
        }
        case trace::UmCauseKind::Kernel:
        case trace::UmCauseKind::Copy:
        case trace::UmCauseKind::Memset: {
          std::optional<uint32_t> work = gpu_work_op(group.cause);
          if (!work) continue;
          op.caused_by = *work;
          break;
        }
        case trace::UmCauseKind::HostPhase: {
          uint32_t& phase = host_phase_ops[group.cause.row];
          if (phase == Op::kNoOp) phase = add_host_phase(um.host_phases[group.cause.row]);
          op.caused_by = phase;
          op.source_id = out_.ops[phase].source_id;
          break;
        }
        case trace::UmCauseKind::None: continue;
      }
      op.kind = OpKind::Migration;
      op.copy_kind = CopyKind::Unknown;
      op.bytes = group.bytes;
      op.from = static_cast<int16_t>(group.from);
      op.to = static_cast<int16_t>(group.to);
      op.migration_cause = static_cast<uint8_t>(group.migration_cause);
      Access moved = whole(location->second);
      moved.reads = moved.writes = moved.exact = true;
      add_access(add_op(op), moved);
    }
  }

  // The op of a kernel, copy or memset row. Copies and memsets are indexed
  // only when a migration needs one: most traces have no unified memory.
  std::optional<uint32_t> gpu_work_op(const trace::UmCause& work) {
    if (work.kind == trace::UmCauseKind::Kernel) return kernel_op(work.row);
    if (!copies_and_memsets_indexed_) {
      copies_and_memsets_indexed_ = true;
      for (uint32_t op = 0; op < out_.ops.size(); ++op) {
        OpKind kind = out_.ops[op].kind;
        if (kind == OpKind::Copy || kind == OpKind::Memset)
          copy_and_memset_ops_.emplace(std::make_pair(kind, out_.ops[op].source_id), op);
      }
    }
    OpKind kind = work.kind == trace::UmCauseKind::Copy ? OpKind::Copy : OpKind::Memset;
    auto found = copy_and_memset_ops_.find({kind, work.row});
    if (found == copy_and_memset_ops_.end()) return std::nullopt;
    return found->second;
  }

  // The CPU touching managed memory: an op of the host lane, at the time of
  // the migrations it caused. Host reads and writes are invisible, so it
  // touches nothing itself.
  uint32_t add_host_phase(const trace::HostPhase& phase) {
    Op op;
    op.kind = OpKind::HostPhase;
    op.source_id = phase.first_event_id;
    op.issue_ns = op.start_ns = phase.start_ns;
    op.end_ns = phase.end_ns;
    return add_op(op);
  }

  // Blocks split accesses to their own process's allocations only: the
  // ranks of a merged trace use the same addresses.
  void split_by_blocks_per_process() {
    std::set<ProcessId> processes;
    for (const Block& block : blocks_) processes.insert(block.process);
    if (processes.size() <= 1) {
      split_by_blocks(pending_, pending_positions_, out_.ops, out_.locations, std::move(blocks_), holds_blocks_,
                      out_.rank_calls);
      return;
    }
    for (ProcessId process : processes) {
      std::vector<Block> own;
      std::copy_if(blocks_.begin(), blocks_.end(), std::back_inserter(own),
                   [&](const Block& b) { return b.process == process; });
      std::vector<bool> holds_own = holds_blocks_;
      for (size_t i = 0; i < holds_own.size(); ++i)
        holds_own[i] = holds_own[i] && out_.locations[i].process == process;
      split_by_blocks(pending_, pending_positions_, out_.ops, out_.locations, std::move(own), holds_own, out_.rank_calls);
    }
  }

  // Accesses grouped by op. They arrive almost in op order (a few sorted
  // runs), so sorting in place is cheap and holds them only once. Ranges are
  // clamped to their location: an unknown region grew to its largest copy.
  // An access that touches no byte (a pointer just past its region's end)
  // is dropped.
  void group_accesses() {
    size_t kept = 0;
    for (size_t i = 0; i < pending_.size(); ++i) {
      Access& access = pending_[i];
      int64_t bytes = out_.locations[access.location].bytes;
      access.begin = std::clamp<int64_t>(access.begin, 0, bytes);
      access.end = std::clamp<int64_t>(access.end, access.begin, bytes);
      if (access.begin < access.end || bytes == 0) keep_pending(i, kept++);
    }
    pending_.resize(kept);
    pending_positions_.resize(kept);
    sort_by_op_and_place();
    // One op touching the same bytes twice (an argument and its exact range,
    // two arguments into one buffer) is one access: a write of them replaces
    // them when either says so.
    kept = 0;
    for (size_t i = 0; i < pending_.size(); ++i) {
      const Access& access = pending_[i];
      if (kept > 0) {
        Access& last = pending_[kept - 1];
        if (last.op == access.op && last.location == access.location &&
            last.begin == access.begin && last.end == access.end) {
          last.reads |= access.reads;
          last.writes |= access.writes;
          last.known_read |= access.known_read;
          last.exact |= access.exact;
          last.to_end &= access.to_end;
          last.granule_rounded |= access.granule_rounded;
          if (pending_positions_[kept - 1] != pending_positions_[i]) pending_positions_[kept - 1] = -1;
          continue;
        }
      }
      keep_pending(i, kept++);
    }
    pending_.resize(kept);
    for (uint32_t i = 0; i < kept; ++i) {
      if (pending_positions_[i] >= 0) out_.positions.push_back({i, pending_positions_[i]});
    }
    std::vector<int64_t>().swap(pending_positions_);
    out_.access_begin.assign(out_.ops.size() + 1, 0);
    for (const Access& access : pending_) ++out_.access_begin[access.op + 1];
    for (size_t i = 1; i < out_.access_begin.size(); ++i) {
      out_.access_begin[i] += out_.access_begin[i - 1];
    }
    out_.accesses = std::move(pending_);
  }

  // Pending access `from`, and its position, copied to `to`.
  void keep_pending(size_t from, size_t to) {
    pending_[to] = pending_[from];
    pending_positions_[to] = pending_positions_[from];
  }

  void swap_pending(size_t a, size_t b) {
    std::swap(pending_[a], pending_[b]);
    std::swap(pending_positions_[a], pending_positions_[b]);
  }

  // Orders pending_ by (op, location, begin, end). By op in place, swapping
  // each access into its op's stretch (ops are positions, so this is a
  // counting sort: a million-op trace's few million accesses need no
  // comparison sort, nor a second copy of them); then each op's few
  // accesses by place. Accesses to the same place merge alike in any
  // order (group_accesses), so the order they came in need not be kept.
  void sort_by_op_and_place() {
    std::vector<uint32_t> next(out_.ops.size() + 1, 0);
    for (const Access& access : pending_) ++next[access.op + 1];
    for (size_t i = 1; i < next.size(); ++i) next[i] += next[i - 1];
    // next[op] .. end[op]: what of op's stretch is not yet in place.
    std::vector<uint32_t> end(next.begin() + 1, next.end());
    for (size_t op = 0; op < out_.ops.size(); ++op) {
      while (next[op] < end[op]) {
        uint32_t owner = pending_[next[op]].op;
        if (owner == op) {
          ++next[op];
        } else {
          swap_pending(next[op], next[owner]++);
        }
      }
    }
    auto by_place = [](const Access& a, const Access& b) {
      uint32_t a_location = a.location, b_location = b.location;  // bit-fields
      return std::tie(a_location, a.begin, a.end) < std::tie(b_location, b.begin, b.end);
    };
    // next[op] is now where op's accesses end.
    uint32_t first = 0;
    for (size_t op = 0; op < out_.ops.size(); ++op) {
      uint32_t last = next[op];
      uint32_t count = last - first;
      if (count > 16) {
        // Sorted by index, so that their positions follow.
        std::vector<uint32_t> order(count);
        std::iota(order.begin(), order.end(), first);
        std::stable_sort(order.begin(), order.end(),
                         [&](uint32_t a, uint32_t b) { return by_place(pending_[a], pending_[b]); });
        std::vector<Access> accesses(count);
        std::vector<int64_t> positions(count);
        for (uint32_t i = 0; i < count; ++i) {
          accesses[i] = pending_[order[i]];
          positions[i] = pending_positions_[order[i]];
        }
        std::copy(accesses.begin(), accesses.end(), pending_.begin() + first);
        std::copy(positions.begin(), positions.end(), pending_positions_.begin() + first);
      } else {
        // Insertion sort (stable): a stable_sort of a handful would allocate its buffer each time.
        for (uint32_t i = first + 1; i < last; ++i) {
          Access moving = pending_[i];
          int64_t moving_position = pending_positions_[i];
          uint32_t hole = i;
          for (; hole != first && by_place(moving, pending_[hole - 1]); --hole) keep_pending(hole - 1, hole);
          pending_[hole] = moving;
          pending_positions_[hole] = moving_position;
        }
      }
      first = last;
    }
  }

  trace::Trace& trace_;
  const trace::TraceOperations& ops_;
  OpAccesses out_;
  KernelAccesses kernel_accesses_;
  TraceRowsAfter rows_after_;
  trace::ExactAccesses exact_;
  std::unordered_map<int64_t, uint32_t> alloc_locations_;
  std::vector<int64_t> kernel_ids_;   // ascending
  std::vector<uint32_t> kernel_ops_;  // parallel to kernel_ids_
  std::map<std::pair<ProcessId, int64_t>, uint32_t> unknown_locations_;  // by (process, address)
  std::unordered_map<int64_t, Op> prefetches_;  // by memcpys.id, until they move bytes
  std::map<std::pair<OpKind, int64_t>, uint32_t> copy_and_memset_ops_;  // by (kind, row id)
  bool copies_and_memsets_indexed_ = false;
  std::vector<Access> pending_;
  std::vector<int64_t> pending_positions_;  // parallel to pending_ (add_access)
  std::vector<Block> blocks_;        // sub-allocations' lifetimes
  std::vector<bool> holds_blocks_;  // per location: an allocation some block lies in
};

}  // namespace

OpAccesses find_op_accesses(trace::Trace& trace, KernelAccesses kernel_accesses, TraceRowsAfter rows_after) {
  return AccessFinder(trace, kernel_accesses, rows_after).find();
}

}  // namespace apptracer::dvdg
