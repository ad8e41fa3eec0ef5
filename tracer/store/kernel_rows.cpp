#include "store/kernel_rows.h"

#include <utility>

#include "base/self_cost.h"
#include "store/row_values.h"

namespace apptracer {

namespace {

// The columns a launch's call gives, as it gave them: one assignment per
// APPTRACER_LAUNCH_COLUMN of tables.def.
void copy_launch_columns(const LaunchValues& launch, KernelRow& row) {
#define APPTRACER_LAUNCH_COLUMN(name, type, record_type, meaning, doc) row.name = launch.name;
#include "apptracer/tables.def"
}

}  // namespace

// How GPU activity fills a kernels row.
struct KernelTraits {
  static constexpr bool kMoreActivityMayCome = false;
  static void apply(KernelRow& row, const Record& r, bool) {
    const GpuKernelRecord& k = r.gpu_kernel;
    row.gpu_start_ns = as_int(k.start_ns);
    row.gpu_end_ns = as_int(k.end_ns);
    row.stream = static_cast<int64_t>(k.stream);
    row.device = optional_device(k.device);
    row.static_shared_bytes = static_cast<int64_t>(k.static_shared_bytes);
    row.registers_per_thread = static_cast<int64_t>(k.registers_per_thread);
    row.graph_node_id = optional_nonzero(k.graph_node_id);
    if (!row.name_id && k.name_id) row.name_id = static_cast<int64_t>(k.name_id);
  }
  static KernelRow activity_only(const Record& r) {
    const GpuKernelRecord& g = r.gpu_kernel;
    KernelRow row;
    row.call_correlation_id = optional_nonzero(r.correlation_id);
    row.grid_x = g.grid[0];
    row.grid_y = g.grid[1];
    row.grid_z = g.grid[2];
    row.block_x = g.block[0];
    row.block_y = g.block[1];
    row.block_z = g.block[2];
    row.dynamic_shared_bytes = static_cast<int64_t>(g.dynamic_shared_bytes);
    row.launch_kind = g.graph_node_id ? LaunchKind::Graph : LaunchKind::ActivityOnly;
    apply(row, r, true);
    return row;
  }
};

KernelRows::KernelRows(Database& db, AddressResolver& resolver, KernelSignatures& signatures,
                       const GraphNodes& graph_nodes, ActivityWait wait)
    : resolver_(resolver),
      signatures_(signatures),
      graph_nodes_(graph_nodes),
      arg_sets_(db),
      inserters_(db) {
  join_ = std::make_unique<ActivityJoin<KernelRow, KernelTraits>>(
      wait,
      [this](KernelRow& row, bool again) {
        if (!again && row.launch_kind == LaunchKind::Graph) fill_from_graph_node(row);
        if (!row.demangled_id && row.name_id) {
          row.demangled_id = signatures_.demangled_id(static_cast<uint32_t>(*row.name_id));
        }
        inserters_.store(row, again);
      },
      inserters_.loader());
}

KernelRows::~KernelRows() = default;

void KernelRows::write_launch(const Record& r) {
  const KernelRecord& k = r.kernel;
  KernelRow row;
  row.call_correlation_id = optional_nonzero(r.correlation_id);
  if (k.name_id) {
    row.name_id = k.name_id;
    row.demangled_id = signatures_.demangled_id(k.name_id);
  }
  row.launch_kind = k.launch_kind;
  row.device = optional_device(k.device);
  copy_launch_columns(k.launch, row);
  row.function_handle = optional_nonzero(k.function_handle);
  row.api_start_ns = optional_nonzero(k.api_start_ns);
  if (k.args_captured) {
    LaunchArgs& args = launch_args_[r.tid];
    // A launch whose words never came (cut off) is stored as it is.
    if (args.own_correlation_id) {
      join_->update(args.outer_correlation_id, [](KernelRow&) {}, true);
    }
    args.own_correlation_id = r.own_correlation_id;
    args.outer_correlation_id = r.correlation_id;
    args.name_id = k.name_id;
    args.api_start_ns = k.api_start_ns;
    args.words.clear();
  }
  join_->add_row(std::move(row), r.correlation_id, r.own_correlation_id, k.args_captured);
}

std::optional<KernelArgWordRow> KernelRows::argument_row(uint32_t name_id,
                                                         const KernelArgWord& word, uint64_t ns) {
  std::optional<KernelSignatures::Access> access = signatures_.access_of(name_id, word.param_index);
  if (!access) return std::nullopt;
  // Pageable memory a kernel touches first (systems where GPUs read host
  // memory directly) becomes a row now; elsewhere it is not touched at all.
  Resolved target = kernels_read_pageable_ ? resolver_.touch(word.value, ns)
                                           : resolver_.find(word.value, ns);
  if (!kernels_read_pageable_ && target.memory == MemoryKind::Pageable) return std::nullopt;
  // A word in no allocation is a number that looked like an address (packed
  // integers, floats, host pointers into nothing traced: 68% of a PyTorch
  // MLP's words): nothing reads it, and it kept launches from sharing sets.
  if (!target.alloc_id) return std::nullopt;
  KernelArgWordRow row;
  if (word.param_index != UINT16_MAX) row.param_index = word.param_index;
  row.offset = word.offset;
  row.size = word.param_size;
  row.raw_value = as_int(word.value);
  row.alloc_id = target.alloc_id;
  row.alloc_offset = target.offset;
  row.access = access->kind;
  row.access_source = access->source;
  return row;
}

void KernelRows::write_args(const Record& r) {
  auto launch = launch_args_.find(r.tid);
  if (launch == launch_args_.end() || launch->second.own_correlation_id != r.own_correlation_id) {
    return;
  }
  LaunchArgs& args = launch->second;
  const KernelArgsRecord& record = r.kernel_args;
  for (int i = 0; i < record.count && i < KernelArgsRecord::kWords; ++i) {
    std::optional<KernelArgWordRow> row =
        argument_row(args.name_id, record.words[i], args.api_start_ns);
    if (row) args.words.push_back(*row);
  }
  if (!record.last) return;
  int64_t set_id = 0;
  {
    self_cost::Timer timer(self_cost::Site::WriterArgumentSets);
    set_id = arg_sets_.id_of(args.words);
  }
  join_->update(
      args.outer_correlation_id, [set_id](KernelRow& row) { row.arg_set_id = set_id; }, true);
  args.own_correlation_id = 0;
}

void KernelRows::write_activity(const Record& r) { join_->add_activity(r); }

void KernelRows::store_waiting() {
  for (auto& [tid, args] : launch_args_) {
    if (args.own_correlation_id) join_->update(args.outer_correlation_id, [](KernelRow&) {}, true);
    args.own_correlation_id = 0;
  }
  join_->finish();
}

// Addresses resolve at the graph launch's call, like those of work launched
// directly; without it (a launch not seen), when the GPU started the work.
void KernelRows::fill_from_graph_node(KernelRow& row) {
  std::optional<uint64_t> start = graph_nodes_.launch_start(row.call_correlation_id);
  if (start) row.api_start_ns = as_int(*start);
  uint64_t ns = start.value_or(static_cast<uint64_t>(row.gpu_start_ns.value_or(0)));
  const GraphNodes::Params* node =
      row.graph_node_id
          ? graph_nodes_.parameters_of(static_cast<uint64_t>(*row.graph_node_id), ns)
          : nullptr;
  if (!node || node->record.type != GraphNodeType::Kernel) return;
  const KernelNodeParams& k = node->record.params.kernel;
  row.function_handle = optional_nonzero(k.function_handle);
  if (!row.name_id && k.name_id) row.name_id = k.name_id;
  if (!k.args_captured || !node->words_complete) return;
  std::vector<KernelArgWordRow> words;
  for (const KernelArgWord& word : node->words) {
    std::optional<KernelArgWordRow> resolved = argument_row(k.name_id, word, ns);
    if (resolved) words.push_back(*resolved);
  }
  row.arg_set_id = arg_sets_.id_of(words);
}

void KernelRows::end_pass(uint64_t pass_ns) { join_->end_pass(pass_ns); }
bool KernelRows::waiting() const { return join_->waiting(); }
uint64_t KernelRows::stored_again() const { return join_->stored_again(); }

}  // namespace apptracer
