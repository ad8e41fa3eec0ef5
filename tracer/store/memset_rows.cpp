#include "store/memset_rows.h"

#include <optional>
#include <utility>

#include "store/row_values.h"

namespace apptracer {

struct MemsetTraits {
  static constexpr bool kMoreActivityMayCome = false;
  static void apply(MemsetRow& row, const Record& r, bool) {
    const GpuMemsetRecord& m = r.gpu_memset;
    row.gpu_start_ns = as_int(m.start_ns);
    row.gpu_end_ns = as_int(m.end_ns);
    row.stream = static_cast<int64_t>(m.stream);
    row.device = optional_device(m.device);
    row.memory = m.memory;
    row.graph_node_id = optional_nonzero(m.graph_node_id);
  }
  static MemsetRow activity_only(const Record& r) {
    MemsetRow row;
    row.call_correlation_id = optional_nonzero(r.correlation_id);
    row.bytes = as_int(r.gpu_memset.bytes);
    row.value = r.gpu_memset.value;
    row.element_size = 1;
    row.api_start_ns = as_int(r.gpu_memset.start_ns);
    apply(row, r, true);
    return row;
  }
};

MemsetRows::MemsetRows(Database& db, AddressResolver& resolver, const GraphNodes& graph_nodes,
                       ActivityWait wait)
    : resolver_(resolver), graph_nodes_(graph_nodes), inserters_(db) {
  join_ = std::make_unique<ActivityJoin<MemsetRow, MemsetTraits>>(
      wait,
      [this](MemsetRow& row, bool again) {
        if (!again && row.graph_node_id && !row.address) fill_from_graph_node(row);
        inserters_.store(row, again);
      },
      inserters_.loader());
}

MemsetRows::~MemsetRows() = default;

void MemsetRows::write_call(const Record& r) {
  const MemsetRecord& s = r.memset;
  Resolved target = resolver_.find(s.address, s.api_start_ns);
  MemsetRow row;
  row.call_correlation_id = optional_nonzero(r.correlation_id);
  row.address = optional_nonzero(s.address);
  row.bytes = as_int(s.bytes);
  row.value = s.value;
  row.element_size = s.element_size;
  row.alloc_id = target.alloc_id;
  row.alloc_offset = target.offset;
  row.memory = target.memory;
  row.device = target.device;
  row.is_async = s.is_async;
  row.api_start_ns = optional_nonzero(s.api_start_ns);
  join_->add_row(std::move(row), r.correlation_id, r.own_correlation_id);
}

void MemsetRows::fill_from_graph_node(MemsetRow& row) {
  std::optional<uint64_t> start = graph_nodes_.launch_start(row.call_correlation_id);
  uint64_t ns = start.value_or(static_cast<uint64_t>(row.api_start_ns.value_or(0)));
  const GraphNodes::Params* node =
      graph_nodes_.parameters_of(static_cast<uint64_t>(*row.graph_node_id), ns);
  if (!node || node->record.type != GraphNodeType::Memset) return;
  const MemsetNodeParams& m = node->record.params.memset;
  if (start) row.api_start_ns = as_int(*start);
  Resolved target = resolver_.find(m.address, ns);
  row.address = optional_nonzero(m.address);
  row.alloc_id = target.alloc_id;
  row.alloc_offset = target.offset;
  row.value = m.value;
  row.element_size = m.element_size;
}

void MemsetRows::write_activity(const Record& r) { join_->add_activity(r); }
void MemsetRows::end_pass(uint64_t pass_ns) { join_->end_pass(pass_ns); }
bool MemsetRows::waiting() const { return join_->waiting(); }
uint64_t MemsetRows::stored_again() const { return join_->stored_again(); }
void MemsetRows::store_waiting() { join_->finish(); }

}  // namespace apptracer
