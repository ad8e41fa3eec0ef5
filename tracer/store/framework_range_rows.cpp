#include "store/framework_range_rows.h"

namespace apptracer {

std::optional<FrameworkRangeRow> FrameworkRangeRows::add(const Record& r) {
  const FrameworkRangeRecord& f = r.framework_range;
  uint64_t stack_key = (uint64_t{r.tid} << 8) | static_cast<uint64_t>(f.kind);
  std::vector<FrameworkRangeRow>& stack = stacks_[stack_key];
  if (f.event == FrameworkRangeEvent::Push) {
    FrameworkRangeRow row;
    row.kind = f.kind;
    if (f.name_id != 0) row.name_id = f.name_id;
    row.tid = r.tid;
    row.depth = static_cast<int64_t>(stack.size());
    if (f.seq >= 0) row.seq = f.seq;
    row.start_ns = static_cast<int64_t>(f.ns);
    stack.push_back(row);
    return std::nullopt;
  }
  // A pop with nothing pushed (pushed before tracing began): nothing to close.
  if (stack.empty()) return std::nullopt;
  FrameworkRangeRow row = stack.back();
  stack.pop_back();
  row.end_ns = static_cast<int64_t>(f.ns);
  return row;
}

std::vector<FrameworkRangeRow> FrameworkRangeRows::take_open() {
  std::vector<FrameworkRangeRow> open;
  for (auto& [key, stack] : stacks_) open.insert(open.end(), stack.begin(), stack.end());
  stacks_.clear();
  return open;
}

}  // namespace apptracer
