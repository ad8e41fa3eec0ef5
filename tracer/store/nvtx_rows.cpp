#include "store/nvtx_rows.h"

namespace apptracer {

namespace {

std::optional<int64_t> optional_id(uint32_t id) {
  if (id == 0) return std::nullopt;
  return id;
}

NvtxRangeRow opened(const Record& r, NvtxKind kind) {
  NvtxRangeRow row;
  row.name_id = optional_id(r.nvtx.name_id);
  row.tid = r.tid;
  row.domain_id = optional_id(r.nvtx.domain_id);
  row.start_ns = static_cast<int64_t>(r.nvtx.ns);
  row.kind = kind;
  return row;
}

}  // namespace

std::optional<NvtxRangeRow> NvtxRows::add(const Record& r) {
  const NvtxRecord& n = r.nvtx;
  uint64_t stack_key = (uint64_t{r.tid} << 32) | n.domain_id;
  switch (n.event) {
    case NvtxEvent::Push: {
      std::vector<NvtxRangeRow>& stack = stacks_[stack_key];
      NvtxRangeRow row = opened(r, NvtxKind::PushPop);
      row.depth = static_cast<int64_t>(stack.size());
      stack.push_back(row);
      return std::nullopt;
    }
    case NvtxEvent::Pop: {
      auto stack = stacks_.find(stack_key);
      // A pop with nothing pushed (pushed before tracing began): nothing to close.
      if (stack == stacks_.end() || stack->second.empty()) return std::nullopt;
      NvtxRangeRow row = stack->second.back();
      stack->second.pop_back();
      row.end_ns = static_cast<int64_t>(n.ns);
      return row;
    }
    case NvtxEvent::Start:
      started_[n.range_id] = opened(r, NvtxKind::StartEnd);
      return std::nullopt;
    case NvtxEvent::End: {
      auto it = started_.find(n.range_id);
      if (it == started_.end()) return std::nullopt;
      NvtxRangeRow row = it->second;
      started_.erase(it);
      row.end_ns = static_cast<int64_t>(n.ns);
      return row;
    }
    case NvtxEvent::Mark: {
      NvtxRangeRow row = opened(r, NvtxKind::Mark);
      row.end_ns = row.start_ns;
      return row;
    }
  }
  return std::nullopt;
}

std::vector<NvtxRangeRow> NvtxRows::take_open() {
  std::vector<NvtxRangeRow> open;
  for (auto& [key, stack] : stacks_) open.insert(open.end(), stack.begin(), stack.end());
  for (auto& [id, row] : started_) open.push_back(row);
  stacks_.clear();
  started_.clear();
  return open;
}

}  // namespace apptracer
