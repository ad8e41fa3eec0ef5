#include "analyzer/memory/owner_series.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "apptracer/saturating.h"

namespace apptracer::memory {

namespace {

// An item's allocation (+1) or end (-1). An item changes its own owner and,
// a block inside a segment, the segment's (memory_model.cpp counts it so):
// its bytes move from that allocator's cache to the block's owner. One
// change per moment, not one per owner: a training trace has millions.
struct Change {
  int64_t ns = 0;
  uint32_t item = 0;
  int32_t sign = 1;
};

}  // namespace

OwnerSeries owner_series(const MemoryModel& model, const DeviceMemory& device, size_t points) {
  // Owners are numbered in order of first appearance, an item's own before
  // its segment's.
  std::map<std::string, size_t> index;
  std::map<std::pair<Owner, std::optional<SubAllocator>>, size_t> number;
  auto owner_of = [&](const MemoryItem& item) {
    auto [known, added] = number.try_emplace({item.owner, item.allocator});
    if (added) known->second = index.emplace(owner_name(item.owner, item.allocator), index.size()).first->second;
    return known->second;
  };
  size_t count = 0;
  for (const MemoryItem& item : model.items) {
    if (!model.on_device(item, device)) continue;
    owner_of(item);
    if (item.segment != kNoItem) owner_of(model.items[item.segment]);
    count += item.end_ns ? 2 : 1;
  }
  std::vector<Change> changes;
  changes.reserve(count);
  for (uint32_t i = 0; i < model.items.size(); ++i) {
    const MemoryItem& item = model.items[i];
    if (!model.on_device(item, device)) continue;
    changes.push_back({item.alloc_ns, i, 1});
    if (item.end_ns) changes.push_back({*item.end_ns, i, -1});
  }
  OwnerSeries out;
  out.owners.resize(index.size());
  out.bytes.assign(index.size(), {});
  for (const auto& [owner, o] : index) out.owners[o] = owner;
  if (changes.empty()) return out;
  // Changes at one time sum alike in any order (a point is kept after the
  // last of them): no stable sort's buffer, half as big as the changes.
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) { return a.ns < b.ns; });
  double first = static_cast<double>(changes.front().ns);
  double width = (static_cast<double>(changes.back().ns) - first) / static_cast<double>(std::max<size_t>(1, points)) + 1;
  std::vector<int64_t> now(index.size(), 0);
  size_t bin = SIZE_MAX;
  int64_t kept_total = INT64_MIN;
  for (size_t i = 0; i < changes.size(); ++i) {
    int64_t ns = changes[i].ns;
    const MemoryItem& item = model.items[changes[i].item];
    int64_t bytes = changes[i].sign * item.bytes;
    size_t owner = owner_of(item);
    now[owner] = saturating_add(now[owner], bytes);
    if (item.segment != kNoItem) {
      size_t cache = owner_of(model.items[item.segment]);
      now[cache] = saturating_add(now[cache], -bytes);
    }
    if (i + 1 < changes.size() && changes[i + 1].ns == ns) continue;  // one point per time
    int64_t total = 0;
    for (int64_t b : now) total = saturating_add(total, b);
    size_t at = static_cast<size_t>((static_cast<double>(ns) - first) / width);
    if (at == bin && total <= kept_total) continue;
    if (at != bin) {
      out.times.push_back(ns);
      for (size_t o = 0; o < now.size(); ++o) out.bytes[o].push_back(now[o]);
    } else {
      out.times.back() = ns;
      for (size_t o = 0; o < now.size(); ++o) out.bytes[o].back() = now[o];
    }
    bin = at;
    kept_total = total;
  }
  return out;
}

}  // namespace apptracer::memory
