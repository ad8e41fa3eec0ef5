#include "analyzer/trace/framework_context.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <tuple>

#include "analyzer/trace/trace.h"
#include "analyzer/trace/xla_range_names.h"
#include "apptracer/schema.h"

namespace apptracer::trace {

std::string_view to_string(ModulePhase phase) {
  switch (phase) {
    case ModulePhase::None: return "";
    case ModulePhase::Forward: return "forward";
    case ModulePhase::Backward: return "backward";
    case ModulePhase::Scope: return "scope";
  }
  return "";
}

std::string module_label(std::string_view module, ModulePhase phase) {
  std::string_view name = to_string(phase);
  return name.empty() ? std::string(module) : std::string(module) + " (" + std::string(name) + ")";
}

FrameworkContexts::FrameworkContexts(Trace& trace) {
  std::map<std::pair<ProcessId, int64_t>, Thread> threads;
  // Streamed: the ranges are read into Range, not held as rows too.
  if (trace.db().has_table(FrameworkRangeRow::kTable)) {
    trace.stream_columns<FrameworkRangeRow>(
        {"kind", "name_id", "tid", "depth", "start_ns", "end_ns", "seq"}, "",
        [&](const Packed<FrameworkRangeRow>& row) {
          if (!row.tid) return;
          Thread& ranges = threads[{row.process, *row.tid}];
          Range range{row.start_ns, row.end_ns.value_or(std::numeric_limits<int64_t>::max()),
                      row.depth.value_or(0), row.name_id.value_or(0), row.seq.value_or(-1)};
          switch (row.kind) {
            case FrameworkRangeKind::Module: ranges.modules.push_back(range); break;
            case FrameworkRangeKind::Op: ranges.ops.push_back(range); break;
            case FrameworkRangeKind::Backward: ranges.backward.push_back(range); break;
            case FrameworkRangeKind::Scope: ranges.scopes.push_back(range); break;
          }
        });
  }
  if (threads.empty()) read_xla_ranges(trace, threads);
  if (threads.empty()) return;
  recorded_ = true;
  auto by_start = [](const Range& a, const Range& b) {
    return std::tie(a.start_ns, a.depth) < std::tie(b.start_ns, b.depth);
  };
  for (auto& [key, ranges] : threads) {
    for (std::vector<Range>* kind : {&ranges.modules, &ranges.ops, &ranges.backward, &ranges.scopes}) {
      std::sort(kind->begin(), kind->end(), by_start);
    }
  }
  // A backward node's module: the forward op that created it is the last
  // one that started with its sequence number (later ops see the next one).
  std::unordered_map<int64_t, int64_t> latest_start;
  for (const auto& [key, ranges] : threads) {
    for (const Range& op : ranges.ops) {
      if (op.seq < 0) continue;
      const Range* module = made_in(ranges, op.start_ns);
      if (!module) continue;
      int64_t node = node_key(key.first, op.seq);
      auto [at, added] = latest_start.emplace(node, op.start_ns);
      if (!added && at->second > op.start_ns) continue;
      at->second = op.start_ns;
      module_of_node_[node] = module->name_id;
    }
  }
  // Streamed, three columns: a command that never reads the calls whole
  // does not hold them twice; grown once (a million calls, doubling, held
  // 64 MB for 38). Each names its thread by the order of first sight until
  // all threads are known.
  std::map<std::pair<ProcessId, int64_t>, uint32_t> seen;
  std::vector<std::pair<ProcessId, int64_t>> seen_order;
  calls_.reserve(static_cast<size_t>(std::max<int64_t>(0, trace.row_count(ApiCallRow::kTable))));
  trace.stream_columns<ApiCallRow>({"correlation_id", "tid", "start_ns"}, "", [&](const Packed<ApiCallRow>& call) {
    auto [at, added] = seen.try_emplace({call.process, call.tid}, static_cast<uint32_t>(seen_order.size()));
    if (added) seen_order.push_back(at->first);
    calls_.push_back({call.correlation_id, call.start_ns, at->second});
  });
  for (const auto& key : seen_order) threads.try_emplace(key);
  threads_.reserve(threads.size());
  for (auto& [key, ranges] : threads) {
    ranges.process = key.first;
    ranges.tid = key.second;
    threads_.push_back(std::move(ranges));
  }
  std::vector<uint32_t> position(seen_order.size());
  for (size_t i = 0; i < seen_order.size(); ++i) position[i] = thread(seen_order[i].first, seen_order[i].second);
  for (Call& call : calls_) call.thread = position[call.thread];
  std::sort(calls_.begin(), calls_.end(), [&](const Call& a, const Call& b) {
    return std::make_tuple(threads_[a.thread].process, a.correlation_id, a.start_ns) <
           std::make_tuple(threads_[b.thread].process, b.correlation_id, b.start_ns);
  });
  op_sample_every_ = std::max<int64_t>(1, std::atoll(trace.meta(kMetaOpSampleEvery).c_str()));
  if (op_sample_every_ > 1) {
    link_nodes_by_step_period(trace);
    fill_from_other_steps(trace);
  }
}

bool has_framework_ranges(Trace& trace) {
  if (trace.db().has_table(FrameworkRangeRow::kTable) && trace.row_count(FrameworkRangeRow::kTable) > 0) return true;
  // XLA's thunk ranges: a name among the strings (few) that a range has.
  if (!trace.db().has_table(NvtxRangeRow::kTable)) return false;
  Statement xla = trace.db().prepare(
      "SELECT EXISTS (SELECT 1 FROM strings s WHERE s.text LIKE 'Thunk:#%' "
      "AND EXISTS (SELECT 1 FROM nvtx_ranges n WHERE n.name_id = s.id))");
  xla.step();
  return xla.int64(0) != 0;
}

// XLA's executables are scopes (the jitted function), its thunks ops, and
// their source paths' modules forward modules or, in a transposed pass,
// backward ones: a backward range keyed to its module as an autograd node
// is to the forward that made it (module_of_node_).
void FrameworkContexts::read_xla_ranges(Trace& trace, std::map<std::pair<ProcessId, int64_t>, Thread>& threads) {
  struct Named {
    std::optional<XlaRange> range;
    int64_t name_id = 0, module_id = 0;
  };
  std::unordered_map<int64_t, Named> named;  // by NVTX name id: millions of ranges, few names
  trace.stream_columns<NvtxRangeRow>({"name_id", "tid", "depth", "start_ns", "end_ns"}, "",
                                     [&](const Packed<NvtxRangeRow>& row) {
    if (!row.tid || !row.name_id) return;
    auto [known, added] = named.try_emplace(*row.name_id);
    Named& name = known->second;
    if (added) {
      name.range = parse_xla_range(trace.string(row.name_id, ""));
      if (name.range) name.name_id = trace.derived_string(name.range->name);
      if (name.range && !name.range->module.empty()) name.module_id = trace.derived_string(name.range->module);
    }
    if (!name.range) return;
    Thread& ranges = threads[{row.process, *row.tid}];
    Range range{row.start_ns, row.end_ns.value_or(std::numeric_limits<int64_t>::max()), row.depth.value_or(0),
                name.name_id, -1};
    if (name.range->kind == XlaRange::Kind::Executable) {
      ranges.scopes.push_back(range);
      return;
    }
    ranges.ops.push_back(range);
    if (!name.module_id) return;
    range.name_id = name.module_id;
    if (name.range->phase != ModulePhase::Backward) {
      ranges.modules.push_back(range);
      return;
    }
    range.seq = -name.module_id;
    module_of_node_[node_key(row.process, range.seq)] = name.module_id;
    ranges.backward.push_back(range);
  });
  from_xla_ = !threads.empty();
}

const FrameworkContexts::Range* FrameworkContexts::innermost(const std::vector<Range>& ranges,
                                                             int64_t ns) {
  auto after = std::upper_bound(ranges.begin(), ranges.end(), ns,
                                [](int64_t t, const Range& range) { return t < range.start_ns; });
  // Ranges nest: walking back from the last one started, the first that
  // still holds `ns` is the innermost; one no deeper than the shallowest
  // seen so far is an ancestor's candidate, deeper ones are done siblings.
  int64_t shallowest = std::numeric_limits<int64_t>::max();
  for (auto it = after; it != ranges.begin();) {
    --it;
    if (it->depth >= shallowest) continue;
    if (it->end_ns >= ns) return &*it;
    shallowest = it->depth;
    if (shallowest == 0) return nullptr;
  }
  return nullptr;
}

const FrameworkContexts::Range* FrameworkContexts::made_in(const Thread& ranges, int64_t ns) {
  const Range* module = innermost(ranges.modules, ns);
  return module ? module : innermost(ranges.scopes, ns);
}

uint32_t FrameworkContexts::thread(ProcessId process, int64_t tid) const {
  auto found = std::lower_bound(threads_.begin(), threads_.end(), std::make_pair(process, tid),
                                [](const Thread& t, const std::pair<ProcessId, int64_t>& key) {
                                  return std::make_pair(t.process, t.tid) < key;
                                });
  if (found == threads_.end() || found->process != process || found->tid != tid) return kNone;
  return static_cast<uint32_t>(found - threads_.begin());
}

int64_t FrameworkContexts::time_in_scopes(ProcessId process, int64_t tid, int64_t from, int64_t to,
                                          const std::function<bool(int64_t name_id)>& named) const {
  uint32_t on = thread(process, tid);
  if (on == kNone || to <= from) return 0;
  const std::vector<Range>& scopes = threads_[on].scopes;
  auto overlap = [&](const Range& scope) {
    return std::max<int64_t>(0, std::min(scope.end_ns, to) - std::max(scope.start_ns, from));
  };
  auto first = std::lower_bound(scopes.begin(), scopes.end(), from,
                                [](const Range& scope, int64_t ns) { return scope.start_ns < ns; });
  int64_t inside = 0;
  // Of those that began before the window, only the last admitted can reach into it.
  for (auto it = first; it != scopes.begin();) {
    if (named((--it)->name_id)) {
      inside += overlap(*it);
      break;
    }
  }
  for (auto it = first; it != scopes.end() && it->start_ns < to; ++it) {
    if (named(it->name_id)) inside += overlap(*it);
  }
  return inside;
}

FrameworkContext FrameworkContexts::issued(ProcessId process, NullableInt tid, NullableInt ns) const {
  if (!tid || !ns) return {};
  uint32_t on = thread(process, *tid);
  if (on == kNone) return {};
  auto found = std::lower_bound(placed_calls_.begin(), placed_calls_.end(), std::make_pair(on, *ns),
                                [&](uint32_t call, const std::pair<uint32_t, int64_t>& key) {
                                  return std::make_pair(calls_[call].thread, calls_[call].start_ns) < key;
                                });
  bool placed = found != placed_calls_.end() && calls_[*found].thread == on && calls_[*found].start_ns == *ns;
  return at(on, *ns, placed ? calls_[*found].place : kNone);
}

FrameworkContext FrameworkContexts::at(uint32_t thread, int64_t ns, uint32_t place) const {
  FrameworkContext context = recorded_at(threads_[thread], ns);
  if (place != kNone) complete(places_[place], ns, context);
  return context;
}

const FrameworkContexts::Range* FrameworkContexts::ended_before(const std::vector<Range>& ranges, int64_t ns) {
  auto after = std::upper_bound(ranges.begin(), ranges.end(), ns,
                                [](int64_t t, const Range& range) { return t < range.start_ns; });
  // Outermost ranges follow one another: the last to start ended last.
  for (auto it = after; it != ranges.begin();) {
    --it;
    if (it->depth == 0) return it->end_ns < ns ? &*it : nullptr;
  }
  return nullptr;
}

FrameworkContext FrameworkContexts::recorded_at(const Thread& ranges, int64_t ns) const {
  FrameworkContext context;
  const Range* backward = innermost(ranges.backward, ns);
  if (const Range* op = innermost(ranges.ops, ns)) {
    context.op_id = op->name_id;
    context.op_start_ns = op->start_ns;
    context.op_end_ns = op->end_ns;
  } else if (backward) {
    context.op_id = backward->name_id;
    context.op_start_ns = backward->start_ns;
    context.op_end_ns = backward->end_ns;
  }
  // Every node recorded: work outside them on a thread that runs nodes and
  // no module's forward (autograd's own) is the engine's between nodes, the
  // node's before it (framework_context.h). A thread that also runs
  // forwards (backward of CPU tensors runs on the caller's) next runs the
  // loss and the optimizer, which are no node's.
  if (!backward && op_sample_every_ == 1 && ranges.modules.empty() && !from_xla_) {
    backward = ended_before(ranges.backward, ns);
  }
  if (const Range* module = innermost(ranges.modules, ns)) {
    context.module_id = module->name_id;
    context.phase = ModulePhase::Forward;
  } else if (backward) {
    auto created = backward->seq < 0 ? module_of_node_.end()
                                      : module_of_node_.find(node_key(ranges.process, backward->seq));
    if (created != module_of_node_.end()) {
      context.module_id = created->second;
      context.phase = ModulePhase::Backward;
    }
  }
  if (context.phase == ModulePhase::None) {
    if (const Range* scope = innermost(ranges.scopes, ns)) {
      context.module_id = scope->name_id;
      context.phase = ModulePhase::Scope;
    }
  }
  return context;
}

const FrameworkContexts::Call* FrameworkContexts::find_call(ProcessId process,
                                                            int64_t correlation_id) const {
  auto found = std::lower_bound(calls_.begin(), calls_.end(), std::make_pair(process, correlation_id),
                                [&](const Call& call, const std::pair<ProcessId, int64_t>& key) {
                                  return std::make_pair(threads_[call.thread].process, call.correlation_id) < key;
                                });
  if (found == calls_.end() || threads_[found->thread].process != process || found->correlation_id != correlation_id)
    return nullptr;
  return &*found;
}

FrameworkContext FrameworkContexts::of_call(ProcessId process, NullableInt call_correlation_id) const {
  if (!call_correlation_id) return {};
  const Call* call = find_call(process, *call_correlation_id);
  return call ? at(call->thread, call->start_ns, call->place) : FrameworkContext{};
}

}  // namespace apptracer::trace
