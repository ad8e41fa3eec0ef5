#include "analyzer/memory/checkpoint_whatif.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "analyzer/memory/memory_whatif.h"
#include "analyzer/trace/framework_context.h"
#include "analyzer/trace/trace_operations.h"
#include "apptracer/saturating.h"

namespace apptracer::memory {

namespace {

enum class Phase : uint8_t { None, Forward, Backward };

// `path` is `module` or one of its submodules.
bool within(std::string_view path, const std::string& module) {
  return path == module ||
         (path.size() > module.size() && path.compare(0, module.size(), module) == 0 && path[module.size()] == '.');
}

trace::NullableInt call_of(trace::Trace& trace, const dvdg::Op& op) {
  const trace::TraceOperations& ops = trace.operations();
  switch (op.kind) {
    case trace::OpKind::Kernel:
      if (const trace::Kernel* kernel = ops.kernel(op.source_id)) return kernel->row->call_correlation_id;
      break;
    case trace::OpKind::Copy:
    case trace::OpKind::Prefetch:
      if (const trace::Transfer* copy = ops.copy(op.source_id)) return copy->correlation();
      break;
    case trace::OpKind::Memset:
      if (const trace::Transfer* memset = ops.memset(op.source_id)) return memset->correlation();
      break;
    default: break;
  }
  return std::nullopt;
}

// Whether each op was issued by the module's forward or its backward.
std::vector<Phase> phases_of(trace::Trace& trace, const dvdg::Graph& graph, const std::string& module) {
  std::vector<Phase> phases(graph.ops.size(), Phase::None);
  const trace::FrameworkContexts& contexts = trace.framework_contexts();
  if (!contexts.recorded()) return phases;
  std::unordered_map<int64_t, bool> matches;  // by the module's name id
  for (uint32_t op = 0; op < graph.ops.size(); ++op) {
    const dvdg::Op& o = graph.ops[op];
    if (trace::is_lifetime_op(o.kind)) continue;
    trace::FrameworkContext context = contexts.of_call(o.process, call_of(trace, o));
    if (!context.module_id) continue;
    auto [known, added] = matches.try_emplace(context.module_id, false);
    if (added) known->second = within(trace.string(context.module_id, ""), module);
    if (!known->second) continue;
    if (context.phase == trace::ModulePhase::Forward) phases[op] = Phase::Forward;
    if (context.phase == trace::ModulePhase::Backward) phases[op] = Phase::Backward;
  }
  return phases;
}

// Calls `use(op, item)` for each op's reads and writes of the model's items.
template <typename Use>
void each_use(const dvdg::Graph& graph, const MemoryModel& model, Use&& use) {
  std::map<std::pair<MemoryItem::Kind, int64_t>, uint32_t> index;
  for (uint32_t i = 0; i < model.items.size(); ++i) index[{model.items[i].kind, model.items[i].id}] = i;
  std::vector<uint32_t> item_of_location(graph.locations.size(), kNoItem);
  for (size_t l = 0; l < graph.locations.size(); ++l) {
    const dvdg::Location& location = graph.locations[l];
    std::optional<std::pair<MemoryItem::Kind, int64_t>> key;
    if (location.sub_allocation_id) {
      key = {MemoryItem::Kind::Block, *location.sub_allocation_id};
    } else if (location.alloc_id) {
      key = {MemoryItem::Kind::Allocation, *location.alloc_id};
    }
    if (!key) continue;
    if (auto found = index.find(*key); found != index.end()) item_of_location[l] = found->second;
  }
  graph.for_each_location_use([&](uint32_t op, uint32_t location, bool) {
    if (item_of_location[location] != kNoItem && !trace::is_lifetime_op(graph.ops[op].kind))
      use(op, item_of_location[location]);
  });
}

}  // namespace

std::vector<CheckpointWhatIf> checkpoint_what_if(trace::Trace& trace, const dvdg::Graph& graph,
                                                 const MemoryModel& model, const std::string& module) {
  std::vector<Phase> phases = phases_of(trace, graph, module);
  // Each process's backward work of the module, by start: a piece is made
  // again when the backward after its forward begins.
  std::map<trace::ProcessId, std::vector<int64_t>> backward_starts;
  for (uint32_t op = 0; op < graph.ops.size(); ++op) {
    if (phases[op] == Phase::Backward) backward_starts[graph.ops[op].process].push_back(graph.ops[op].start_ns);
  }
  for (auto& [process, starts] : backward_starts) std::sort(starts.begin(), starts.end());
  // Pieces the module's forward produced whose last use is in its backward.
  std::vector<uint32_t> last_op(model.items.size(), kNoOp);
  each_use(graph, model, [&](uint32_t op, uint32_t item) {
    if (last_op[item] == kNoOp || graph.ops[op].end_ns > graph.ops[last_op[item]].end_ns) last_op[item] = op;
  });
  std::vector<std::optional<int64_t>> recomputed_at(model.items.size());
  for (uint32_t i = 0; i < model.items.size(); ++i) {
    const MemoryItem& item = model.items[i];
    if (item.is_segment() || is_library_memory(item.owner) || item.producer == kNoOp || last_op[i] == kNoOp ||
        phases[item.producer] != Phase::Forward || phases[last_op[i]] != Phase::Backward)
      continue;
    auto starts = backward_starts.find(model.origin(item).process);
    if (starts == backward_starts.end()) continue;
    auto next = std::lower_bound(starts->second.begin(), starts->second.end(), graph.ops[item.producer].end_ns);
    if (next != starts->second.end()) recomputed_at[i] = *next;
  }
  // How long the forward still uses each of them.
  std::vector<int64_t> forward_end(model.items.size(), INT64_MIN);
  each_use(graph, model, [&](uint32_t op, uint32_t item) {
    if (recomputed_at[item] && graph.ops[op].start_ns < *recomputed_at[item])
      forward_end[item] = std::max(forward_end[item], graph.ops[op].end_ns);
  });
  std::vector<CheckpointWhatIf> answers;
  for (const DeviceMemory& device : model.devices) {
    if (!device.device) continue;
    CheckpointWhatIf answer;
    answer.device = &device;
    for (uint32_t op = 0; op < graph.ops.size(); ++op) {
      const dvdg::Op& o = graph.ops[op];
      if (phases[op] == Phase::Forward && o.process == device.process && o.device == device.device)
        answer.forward_gpu_ns = saturating_add(answer.forward_gpu_ns, o.end_ns - o.start_ns);
    }
    std::vector<std::pair<int64_t, int64_t>> recorded, checkpointed;
    for (uint32_t i = 0; i < model.items.size(); ++i) {
      const MemoryItem& item = model.items[i];
      if (!model.on_device(item, device) || item.is_segment()) continue;
      recorded.emplace_back(item.alloc_ns, item.bytes);
      if (item.end_ns) recorded.emplace_back(*item.end_ns, -item.bytes);
      if (!recomputed_at[i]) {
        checkpointed.emplace_back(item.alloc_ns, item.bytes);
        if (item.end_ns) checkpointed.emplace_back(*item.end_ns, -item.bytes);
        continue;
      }
      answer.pieces += 1;
      checkpointed.emplace_back(item.alloc_ns, item.bytes);
      checkpointed.emplace_back(std::max(item.alloc_ns, forward_end[i]), -item.bytes);
      checkpointed.emplace_back(*recomputed_at[i], item.bytes);
      if (item.end_ns) checkpointed.emplace_back(*item.end_ns, -item.bytes);
    }
    if (answer.forward_gpu_ns == 0 && answer.pieces == 0) continue;
    auto [from, to] = window_of(trace, device);
    answer.peak_live_bytes = most_live(std::move(recorded), from, to);
    answer.peak_if_checkpointed = most_live(std::move(checkpointed), from, to);
    if (const trace::ProcessSteps* steps = trace.steps().find(device.process)) {
      const trace::StepWindow* window = trace.window();
      for (const trace::Step& step : steps->steps)
        answer.steps += !window || window->holds(device.process, step.start_ns);
    }
    answers.push_back(answer);
  }
  return answers;
}

}  // namespace apptracer::memory
