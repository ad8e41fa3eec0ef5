#include "analyzer/whatif/op_index.h"

namespace apptracer::whatif {

OpIndex::OpIndex(const ReplayInput& input) {
  for (uint32_t i = 0; i < input.ops.size(); ++i) {
    const ReplayOp& op = input.ops[i];
    if (op.kind == OpKind::EventRecord || op.kind == OpKind::EventWait) continue;
    index_.emplace(std::make_pair(op.kind, op.source_id), i);
  }
}

std::optional<uint32_t> OpIndex::find(const dvdg::Op& op) const {
  std::optional<OpKind> kind;
  switch (op.kind) {
    case OpKind::Kernel:
    case OpKind::Copy:
    case OpKind::Memset: kind = op.kind; break;
    // A prefetch's migration is its own op; others happen inside GPU work.
    case OpKind::Migration:
      if (op.caused_by == dvdg::Op::kNoOp) kind = OpKind::Prefetch;
      break;
    default: break;
  }
  if (!kind) return std::nullopt;
  auto found = index_.find({*kind, op.source_id});
  if (found == index_.end()) return std::nullopt;
  return found->second;
}

}  // namespace apptracer::whatif
