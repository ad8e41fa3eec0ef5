#include "analyzer/memory/owner_series.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "apptracer/saturating.h"

namespace apptracer::memory {

namespace {

// What `item` adds to each owner while it lives, as memory_model.cpp counts
// it: a segment is its allocator's cache; a block inside one moves its bytes
// from that cache to its own owner.
std::vector<std::pair<std::string, int64_t>> owner_bytes(const MemoryModel& model, const MemoryItem& item) {
  std::string owner = owner_name(item.owner, item.allocator);
  if (item.segment == kNoItem) return {{owner, item.bytes}};
  const MemoryItem& segment = model.items[item.segment];
  return {{owner, item.bytes}, {owner_name(segment.owner, segment.allocator), -item.bytes}};
}

}  // namespace

OwnerSeries owner_series(const MemoryModel& model, const DeviceMemory& device, size_t points) {
  auto on_device = [&](const MemoryItem& item) {
    return item.process == device.process && item.device == device.device;
  };
  // Counted first: a training trace's millions of changes, grown by
  // doubling, held nearly twice the room they needed.
  size_t count = 0;
  for (const MemoryItem& item : model.items) {
    if (on_device(item)) count += (item.segment == kNoItem ? 1 : 2) * (item.end_ns ? 2 : 1);  // as owner_bytes
  }
  std::map<std::string, size_t> index;
  std::vector<std::tuple<int64_t, size_t, int64_t>> changes;  // ns, owner, bytes
  changes.reserve(count);
  for (const MemoryItem& item : model.items) {
    if (!on_device(item)) continue;
    for (const auto& [owner, bytes] : owner_bytes(model, item)) {
      size_t o = index.emplace(owner, index.size()).first->second;
      changes.emplace_back(item.alloc_ns, o, bytes);
      if (item.end_ns) changes.emplace_back(*item.end_ns, o, -bytes);
    }
  }
  OwnerSeries out;
  out.owners.resize(index.size());
  out.bytes.assign(index.size(), {});
  for (const auto& [owner, o] : index) out.owners[o] = owner;
  if (changes.empty()) return out;
  // Changes at one time sum alike in any order (a point is kept after the
  // last of them): no stable sort's buffer, half as big as the changes.
  std::sort(changes.begin(), changes.end(),
            [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  double first = static_cast<double>(std::get<0>(changes.front()));
  double width = (static_cast<double>(std::get<0>(changes.back())) - first) / static_cast<double>(std::max<size_t>(1, points)) + 1;
  std::vector<int64_t> now(index.size(), 0);
  size_t bin = SIZE_MAX;
  int64_t kept_total = INT64_MIN;
  for (size_t i = 0; i < changes.size(); ++i) {
    auto [ns, owner, bytes] = changes[i];
    now[owner] = saturating_add(now[owner], bytes);
    if (i + 1 < changes.size() && std::get<0>(changes[i + 1]) == ns) continue;  // one point per time
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
