#include "analyzer/memory/owner_series.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "analyzer/memory/item_changes.h"
#include "apptracer/saturating.h"

namespace apptracer::memory {

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
  std::vector<uint32_t> starts, ends;
  for (uint32_t i = 0; i < model.items.size(); ++i) {
    const MemoryItem& item = model.items[i];
    if (!model.on_device(item, device)) continue;
    owner_of(item);
    if (item.segment != kNoItem) owner_of(model.items[item.segment]);
    starts.push_back(i);
    if (item.end_ns) ends.push_back(i);
  }
  OwnerSeries out;
  out.owners.resize(index.size());
  out.bytes.assign(index.size(), {});
  for (const auto& [owner, o] : index) out.owners[o] = owner;
  ItemChanges changes(
      std::move(starts), std::move(ends), [&](uint32_t i) { return model.items[i].alloc_ns; },
      [&](uint32_t i) { return *model.items[i].end_ns; });
  if (changes.empty()) return out;
  double first = static_cast<double>(changes.first_ns());
  double width = (static_cast<double>(changes.last_ns()) - first) / static_cast<double>(std::max<size_t>(1, points)) + 1;
  std::vector<int64_t> now(index.size(), 0);
  // An item changes its own owner and, a block inside a segment, the
  // segment's (memory_model.cpp counts it so): its bytes move from that
  // allocator's cache to the block's owner.
  auto change = [&](uint32_t i, int sign) {
    const MemoryItem& item = model.items[i];
    int64_t bytes = sign * item.bytes;
    size_t owner = owner_of(item);
    now[owner] = saturating_add(now[owner], bytes);
    if (item.segment != kNoItem) {
      size_t cache = owner_of(model.items[item.segment]);
      now[cache] = saturating_add(now[cache], -bytes);
    }
  };
  // One point per time; in a bin, the last unless an earlier one was higher.
  size_t bin = SIZE_MAX;
  int64_t kept_total = INT64_MIN;
  auto moment = [&](int64_t ns) {
    int64_t total = 0;
    for (int64_t b : now) total = saturating_add(total, b);
    size_t at = static_cast<size_t>((static_cast<double>(ns) - first) / width);
    if (at == bin && total <= kept_total) return true;
    if (at != bin) {
      out.times.push_back(ns);
      for (size_t o = 0; o < now.size(); ++o) out.bytes[o].push_back(now[o]);
    } else {
      out.times.back() = ns;
      for (size_t o = 0; o < now.size(); ++o) out.bytes[o].back() = now[o];
    }
    bin = at;
    kept_total = total;
    return true;
  };
  changes.walk(change, moment);
  return out;
}

}  // namespace apptracer::memory
