#include "analyzer/memory/memory_whatif.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "analyzer/memory/item_changes.h"
#include "apptracer/saturating.h"

namespace apptracer::memory {

namespace {

// The most live at once in [from, to) with each item ending at its last use.
int64_t peak_freed_at_last_use(const MemoryModel& model, const DeviceMemory& device, int64_t from, int64_t to) {
  std::vector<int64_t> end_of(model.items.size(), 0);
  std::vector<uint32_t> starts, ends;
  for (uint32_t i = 0; i < model.items.size(); ++i) {
    const MemoryItem& item = model.items[i];
    if (!model.on_device(item, device) || item.is_segment()) continue;
    std::optional<int64_t> end = item.end_ns;
    if (!is_library_memory(item.owner)) {
      if (!item.last_use_ns) continue;
      int64_t last = std::max(*item.last_use_ns, item.alloc_ns);
      end = end ? std::min(*end, last) : last;
    }
    starts.push_back(i);
    if (end) {
      end_of[i] = *end;
      ends.push_back(i);
    }
  }
  ItemChanges changes(
      std::move(starts), std::move(ends), [&](uint32_t i) { return model.items[i].alloc_ns; },
      [&](uint32_t i) { return end_of[i]; });
  int64_t live = 0, peak = 0;
  changes.walk([&](uint32_t i, int sign) { live = saturating_add(live, sign * model.items[i].bytes); },
               [&](int64_t ns) {
                 if (ns >= to) return false;
                 peak = ns < from ? live : std::max(peak, live);  // what was live before `from` carries in
                 return true;
               });
  return peak;
}

int64_t peak_cache_released(trace::Trace& trace, const DeviceMemory& device, int64_t from, int64_t to) {
  std::vector<int64_t> boundaries;
  if (const trace::ProcessSteps* steps = trace.steps().find(device.process)) {
    for (const trace::Step& step : steps->steps) boundaries.push_back(step.start_ns);
  }
  boundaries.push_back(from);
  std::sort(boundaries.begin(), boundaries.end());
  int64_t peak = 0;
  // One phase at a time: its start's state, then each change inside it.
  for (size_t b = 0; b < boundaries.size(); ++b) {
    int64_t start = std::max(boundaries[b], from);
    int64_t end = std::min(b + 1 < boundaries.size() ? boundaries[b + 1] : INT64_MAX, to);
    if (start >= end) continue;
    MemoryPoint at_start = state_at(device.points, start, false);
    int64_t held = at_start.reserved - at_start.cached;  // the blocks: all the allocator keeps
    peak = std::max(peak, at_start.in_use - at_start.cached);
    auto first = std::lower_bound(device.points.begin(), device.points.end(), start,
                                  [](const MemoryPoint& p, int64_t t) { return p.ns < t; });
    for (auto p = first; p != device.points.end() && p->ns < end; ++p) {
      held = std::max(held, p->reserved - p->cached);
      peak = std::max(peak, p->in_use - p->reserved + held);
    }
  }
  return peak;
}

}  // namespace

int64_t most_live(std::vector<std::pair<int64_t, int64_t>> changes, int64_t from, int64_t to) {
  return most_live_sorting(changes, from, to);
}

int64_t most_live_sorting(std::vector<std::pair<int64_t, int64_t>>& changes, int64_t from, int64_t to) {
  std::sort(changes.begin(), changes.end());
  int64_t live = 0;
  size_t i = 0;
  for (; i < changes.size() && changes[i].first < from; ++i) live = saturating_add(live, changes[i].second);
  int64_t peak = live;
  for (; i < changes.size() && changes[i].first < to; ++i) {
    live = saturating_add(live, changes[i].second);
    if (i + 1 == changes.size() || changes[i + 1].first != changes[i].first) peak = std::max(peak, live);
  }
  return peak;
}

std::pair<int64_t, int64_t> window_of(trace::Trace& trace, const DeviceMemory& device) {
  if (const trace::StepWindow* window = trace.window()) {
    if (auto span = window->span(device.process)) return *span;
  }
  return {INT64_MIN, INT64_MAX};
}

MemoryWhatIf memory_what_if(trace::Trace& trace, const MemoryModel& model, const DeviceMemory& device) {
  auto [from, to] = window_of(trace, device);
  return {peak_freed_at_last_use(model, device, from, to), peak_cache_released(trace, device, from, to)};
}

}  // namespace apptracer::memory
