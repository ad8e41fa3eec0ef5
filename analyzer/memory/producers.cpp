#include "analyzer/memory/producers.h"

#include <algorithm>

namespace apptracer::memory {

using trace::Packed;

Producers::Producers(trace::Trace& trace) : trace_(trace) {
  for (const Packed<NvtxRangeRow>& row : trace.rows<NvtxRangeRow>()) {
    if (row.tid && row.kind != NvtxKind::Mark) ranges_[{row.process, *row.tid}].push_back(&row);
  }
  for (auto& [thread, list] : ranges_) {
    std::stable_sort(list.begin(), list.end(), [](const auto* a, const auto* b) { return a->start_ns < b->start_ns; });
  }
  calls_ = trace.cursor<ApiCallRow>("WHERE correlation_id = ?");
}

trace::NullableInt Producers::issuing_thread(const dvdg::Op& op) {
  trace::NullableInt correlation;
  switch (op.kind) {
    case trace::OpKind::Kernel:
      if (const auto* row = trace_.find<KernelRow>(op.source_id)) correlation = row->call_correlation_id;
      break;
    case trace::OpKind::Copy:
    case trace::OpKind::Prefetch:
      if (const auto* row = trace_.find<MemcpyRow>(op.source_id)) correlation = row->call_correlation_id;
      break;
    case trace::OpKind::Memset:
      if (const auto* row = trace_.find<MemsetRow>(op.source_id)) correlation = row->call_correlation_id;
      break;
    case trace::OpKind::Collective:
    case trace::OpKind::Message:
      if (const auto* row = trace_.find<CollectiveRow>(op.source_id)) return row->tid;
      break;
    default: break;
  }
  if (!correlation || !calls_) return std::nullopt;
  Statement& query = calls_->statement();
  query.reset();
  query.bind(1, *correlation);
  Packed<ApiCallRow> call;
  trace::NullableInt tid;
  while (calls_->next(call)) {
    if (call.process == op.process && !tid) tid = call.tid;
  }
  return tid;
}

std::string Producers::nvtx_path(trace::ProcessId process, trace::NullableInt tid, int64_t ns) {
  if (!tid) return "";
  auto thread = ranges_.find({process, *tid});
  if (thread == ranges_.end()) return "";
  const auto& list = thread->second;
  auto after = std::upper_bound(list.begin(), list.end(), ns,
                                [](int64_t t, const Packed<NvtxRangeRow>* r) { return t < r->start_ns; });
  std::vector<const Packed<NvtxRangeRow>*> open;
  // Back from the latest to start: an open range at depth 0 is the outermost.
  for (auto it = after; it != list.begin();) {
    const Packed<NvtxRangeRow>* range = *--it;
    if (range->end_ns && *range->end_ns <= ns) continue;
    open.push_back(range);
    if (range->depth.value_or(0) == 0) break;
  }
  std::stable_sort(open.begin(), open.end(), [](const auto* a, const auto* b) {
    return a->depth.value_or(0) < b->depth.value_or(0);
  });
  std::string path;
  for (const auto* range : open) path += (path.empty() ? "" : "/") + std::string(trace_.string(range->name_id, "?"));
  return path;
}

Producer Producers::of(const dvdg::OpTable& ops, uint32_t op) {
  auto known = known_.find(op);
  if (known != known_.end()) return known->second;
  const dvdg::Op& o = ops.ops[op];
  Producer producer;
  producer.kind = std::string(trace::to_string(o.kind));
  if (o.kind == trace::OpKind::Kernel) {
    auto name = ops.names.find(o.name_id);
    producer.name = name != ops.names.end() ? name->second : std::string(trace_.string(o.name_id, "?"));
  } else if (o.kind == trace::OpKind::Copy || o.kind == trace::OpKind::Prefetch) {
    producer.name = std::string(to_string(o.copy_kind)) + " " + producer.kind;
  } else {
    producer.name = producer.kind;
  }
  trace::NullableInt tid = issuing_thread(o);
  producer.nvtx = nvtx_path(o.process, tid, o.issue_ns);
  trace::FrameworkContext context = trace_.framework_contexts().issued(o.process, tid, o.issue_ns);
  if (context.module_id) producer.module = trace::module_label(trace_.string(context.module_id, "?"), context.phase);
  if (context.op_id) producer.op = std::string(trace_.string(context.op_id, "?"));
  producer.step = trace_.steps().step_of(o);
  producer.issue_ns = o.issue_ns;
  known_.emplace(op, producer);
  return producer;
}

}  // namespace apptracer::memory
