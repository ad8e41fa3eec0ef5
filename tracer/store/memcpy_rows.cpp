#include "store/memcpy_rows.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "base/numa.h"
#include "store/row_values.h"

namespace apptracer {

namespace {

// A copy's direction from where its endpoints live, for calls that say
// "default" (unified addressing) and for rows that never get activity.
CopyKind infer_copy_kind(MemoryKind src, MemoryKind dst) {
  // Managed memory moves on demand: only the activity record knows.
  if (src == MemoryKind::Managed || dst == MemoryKind::Managed) return CopyKind::Unknown;
  if (src == MemoryKind::Unknown && dst == MemoryKind::Unknown) return CopyKind::Unknown;
  bool src_device = is_device_memory(src);
  bool dst_device = is_device_memory(dst);
  if (src_device && dst_device) return CopyKind::DtoD;
  if (src_device) return CopyKind::DtoH;
  if (dst_device) return CopyKind::HtoD;
  return CopyKind::HtoH;
}

// Which endpoints of a copy may be host memory the program got elsewhere
// (malloc, mmap, the stack): those a copy touches become host rows.
bool may_be_host(CopyKind kind, bool source) {
  switch (kind) {
    case CopyKind::HtoD: return source;
    case CopyKind::DtoH: return !source;
    case CopyKind::HtoH:
    case CopyKind::Unknown: return true;
    default: return false;
  }
}

bool is_host_memory(MemoryKind kind) {
  return kind == MemoryKind::Pageable || kind == MemoryKind::Pinned;
}

}  // namespace

// A copy may reach the GPU as several transfers (a peer copy without peer
// access is staged through the host): the row spans them all. The first
// transfer says what memory the endpoints were; the call's own direction
// stands unless it was "default".
struct MemcpyTraits {
  static constexpr bool kMoreActivityMayCome = true;
  static void apply(MemcpyRow& row, const Record& r, bool first) {
    const GpuMemcpyRecord& m = r.gpu_memcpy;
    row.gpu_start_ns = std::min(row.gpu_start_ns.value_or(as_int(m.start_ns)), as_int(m.start_ns));
    row.gpu_end_ns = std::max(row.gpu_end_ns.value_or(as_int(m.end_ns)), as_int(m.end_ns));
    row.stream = keep_or(row.stream, static_cast<int64_t>(m.stream));
    if (row.kind == CopyKind::Unknown) row.kind = m.kind;
    if (first) {
      row.src_memory = m.src_memory;
      row.dst_memory = m.dst_memory;
    }
    if (m.src_device >= 0) row.src_device = keep_or(row.src_device, m.src_device);
    if (m.dst_device >= 0) row.dst_device = keep_or(row.dst_device, m.dst_device);
    if (m.graph_node_id) row.graph_node_id = keep_or(row.graph_node_id, as_int(m.graph_node_id));
  }
  static MemcpyRow activity_only(const Record& r) {
    const GpuMemcpyRecord& m = r.gpu_memcpy;
    MemcpyRow row;
    row.call_correlation_id = optional_nonzero(r.correlation_id);
    row.bytes = as_int(m.bytes);
    row.kind = m.kind;
    row.is_async = m.is_async;
    row.api_start_ns = as_int(m.start_ns);
    apply(row, r, true);
    return row;
  }
};

MemcpyRows::MemcpyRows(Database& db, AddressResolver& resolver, const GraphNodes& graph_nodes,
                       ActivityWait wait)
    : resolver_(resolver), graph_nodes_(graph_nodes), inserters_(db) {
  join_ = std::make_unique<ActivityJoin<MemcpyRow, MemcpyTraits>>(
      wait,
      [this](MemcpyRow& row, bool again) {
        if (!again && row.graph_node_id && !row.src_address) fill_from_graph_node(row);
        inserters_.store(row, again);
      },
      inserters_.loader());
}

MemcpyRows::~MemcpyRows() = default;

void MemcpyRows::write_call(const Record& r) {
  const MemcpyRecord& m = r.memcpy;
  uint64_t ns = m.api_start_ns;
  auto endpoint = [&](uint64_t address, bool source) {
    return may_be_host(m.kind, source) ? resolver_.touch(address, ns) : resolver_.find(address, ns);
  };
  Resolved src = endpoint(m.src, true);
  Resolved dst = endpoint(m.dst, false);
  // An unresolved endpoint on the host side of a known direction is pageable
  // (or memory we do not see); on the device side it stays unknown.
  if (!src.alloc_id && (m.kind == CopyKind::HtoD || m.kind == CopyKind::HtoH)) {
    src.memory = MemoryKind::Pageable;
  }
  if (!dst.alloc_id && (m.kind == CopyKind::DtoH || m.kind == CopyKind::HtoH)) {
    dst.memory = MemoryKind::Pageable;
  }
  if (m.kind == CopyKind::Prefetch) {
    // The managed range moves to where the call said (the host: no device),
    // from wherever its pages were, which the call does not say.
    src.device = std::nullopt;
    dst.device = std::nullopt;
  }
  // Host memory in no allocation (the stack, small blocks): where its pages are now.
  auto numa_node = [&](const Resolved& at, uint64_t address, uint64_t pitch, bool source) {
    if (at.alloc_id) return is_host_memory(at.memory) ? at.numa_node : std::nullopt;
    if (!may_be_host(m.kind, source) || address == 0) return std::optional<int64_t>();
    int node = numa_node_of(address, m.height ? m.height * pitch : m.bytes);
    return node >= 0 ? std::optional<int64_t>(node) : std::nullopt;
  };
  MemcpyRow row;
  row.call_correlation_id = optional_nonzero(r.correlation_id);
  row.kind = m.kind == CopyKind::Unknown ? infer_copy_kind(src.memory, dst.memory) : m.kind;
  row.src_address = as_int(m.src);
  row.dst_address = as_int(m.dst);
  row.bytes = as_int(m.bytes);
  row.src_alloc_id = src.alloc_id;
  row.dst_alloc_id = dst.alloc_id;
  row.src_offset = src.offset;
  row.dst_offset = dst.offset;
  row.src_memory = src.memory;
  row.dst_memory = dst.memory;
  row.src_device = m.src_device >= 0 ? std::optional<int64_t>(m.src_device) : src.device;
  row.dst_device = m.dst_device >= 0 ? std::optional<int64_t>(m.dst_device) : dst.device;
  row.src_numa_node = numa_node(src, m.src, m.src_pitch, true);
  row.dst_numa_node = numa_node(dst, m.dst, m.dst_pitch, false);
  row.stream = optional_stream(m.stream);
  row.is_async = m.is_async;
  row.width = optional_nonzero(m.width);
  row.height = optional_nonzero(m.height);
  row.src_pitch = optional_nonzero(m.src_pitch);
  row.dst_pitch = optional_nonzero(m.dst_pitch);
  row.api_start_ns = as_int(m.api_start_ns);
  if (row.dst_memory == MemoryKind::Pageable && m.dst_pages_mapped > 0) {
    row.dst_sampled_pages = m.dst_pages_mapped;
    row.dst_untouched_pages = m.dst_pages_untouched;
  }
  // A prefetch moves pages through the unified-memory driver: CUPTI reports
  // it as um_events, never as copy activity.
  if (m.kind == CopyKind::Prefetch) {
    inserters_.store(row, false);
    return;
  }
  join_->add_row(std::move(row), r.correlation_id, r.own_correlation_id);
}

void MemcpyRows::fill_from_graph_node(MemcpyRow& row) {
  std::optional<uint64_t> start = graph_nodes_.launch_start(row.call_correlation_id);
  uint64_t ns = start.value_or(static_cast<uint64_t>(row.api_start_ns.value_or(0)));
  const GraphNodes::Params* node =
      graph_nodes_.parameters_of(static_cast<uint64_t>(*row.graph_node_id), ns);
  if (!node || node->record.type != GraphNodeType::Memcpy) return;
  const CopyNodeParams& c = node->record.params.copy;
  if (start) row.api_start_ns = as_int(*start);
  CopyKind kind = row.kind == CopyKind::Unknown ? c.kind : row.kind;
  auto endpoint = [&](uint64_t address, bool source) {
    return may_be_host(kind, source) ? resolver_.touch(address, ns) : resolver_.find(address, ns);
  };
  Resolved src = endpoint(c.src, true);
  Resolved dst = endpoint(c.dst, false);
  row.src_address = optional_nonzero(c.src);
  row.dst_address = optional_nonzero(c.dst);
  row.src_alloc_id = src.alloc_id;
  row.dst_alloc_id = dst.alloc_id;
  row.src_offset = src.offset;
  row.dst_offset = dst.offset;
  if (!row.src_device) row.src_device = src.device;
  if (!row.dst_device) row.dst_device = dst.device;
}

void MemcpyRows::write_activity(const Record& r) { join_->add_activity(r); }
void MemcpyRows::end_pass(uint64_t pass_ns) { join_->end_pass(pass_ns); }
bool MemcpyRows::waiting() const { return join_->waiting(); }
uint64_t MemcpyRows::stored_again() const { return join_->stored_again(); }
void MemcpyRows::store_waiting() { join_->finish(); }

}  // namespace apptracer
