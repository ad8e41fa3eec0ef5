#include "analyzer/dvdg/block_resolution.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <numeric>
#include <unordered_map>
#include <functional>

#include "analyzer/trace/table_reader.h"
#include "apptracer/saturating.h"

namespace apptracer::dvdg {

namespace {

// The blocks live at a moment, by start address. Live blocks never overlap:
// a block that appears over a live one means that one's free was missed.
class LiveBlocks {
 public:
  explicit LiveBlocks(const std::vector<Block>& blocks) : blocks_(blocks) {}

  void allocate(uint32_t block) {
    const Block& b = blocks_[block];
    auto it = live_.lower_bound(b.address);
    if (it != live_.begin() && end_of(std::prev(it)->second) > b.address) --it;
    while (it != live_.end() && it->first < end_of(block)) it = live_.erase(it);
    live_.emplace(b.address, block);
  }

  void release(uint32_t block) {
    auto it = live_.find(blocks_[block].address);
    if (it != live_.end() && it->second == block) live_.erase(it);
  }

  // The first live block ending after `address` (it may start after it).
  std::map<int64_t, uint32_t>::const_iterator from(int64_t address) const {
    auto it = live_.upper_bound(address);
    if (it != live_.begin() && end_of(std::prev(it)->second) > address) --it;
    return it;
  }
  std::map<int64_t, uint32_t>::const_iterator end() const { return live_.end(); }

  const Block& block(uint32_t index) const { return blocks_[index]; }
  int64_t end_of(uint32_t index) const {
    return saturating_add(blocks_[index].address, blocks_[index].bytes);
  }

 private:
  const std::vector<Block>& blocks_;
  std::map<int64_t, uint32_t> live_;
};

// Rewrites an access in place into its first piece; the other pieces go to
// `extra` (and their positions to `extra_positions`), so that several
// Splitters, each rewriting its own accesses, can run at once.
class Splitter {
 public:
  Splitter(std::vector<Access>& accesses, std::vector<int64_t>& positions, std::vector<Access>& extra,
           std::vector<int64_t>& extra_positions, const std::vector<Location>& locations, const LiveBlocks& live)
      : accesses_(accesses),
        positions_(positions),
        extra_(extra),
        extra_positions_(extra_positions),
        locations_(locations),
        live_(live) {}

  void split(size_t index) {
    original_ = accesses_[index];
    original_position_ = positions_[index];
    const Access& original = original_;
    const Location& parent = locations_[original.location];
    int64_t start = saturating_add(parent.address, original.begin);
    int64_t limit = saturating_add(parent.address, parent.bytes);
    first_ = true;
    index_ = index;
    auto it = live_.from(start);
    if (original.to_end) {
      // A live block is the extent (a stride its launches seemed to show
      // may be blocks handed out one after another, each larger); outside
      // one, the stride, if any, or the next block.
      int64_t reach = std::min(limit, saturating_add(parent.address, original.end));
      if (it != live_.end() && it->first <= start) {
        const Block& b = live_.block(it->second);
        add(b.location, b.address, start, live_.end_of(it->second), start);
      } else {
        int64_t stop = it != live_.end() ? std::min(it->first, reach) : reach;
        add(original.location, parent.address, start, stop, start);
      }
      return;
    }
    int64_t stop = saturating_add(parent.address, original.end);
    for (int64_t cursor = start; cursor < stop;) {
      if (it != live_.end() && it->first <= cursor) {
        const Block& b = live_.block(it->second);
        int64_t piece_end = std::min(stop, live_.end_of(it->second));
        add(b.location, b.address, cursor, piece_end, start);
        cursor = piece_end;
        ++it;
      } else {
        int64_t piece_end = it != live_.end() ? std::min(stop, it->first) : stop;
        add(original.location, parent.address, cursor, piece_end, start);
        cursor = piece_end;
      }
    }
  }

 private:
  // The piece [from, to) (addresses) of the access being split, which
  // starts at `start`, in the location based at `base`.
  void add(uint32_t location, int64_t base, int64_t from, int64_t to, int64_t start) {
    if (to <= from) return;
    Access piece = original_;
    piece.location = location;
    piece.begin = saturating_sub(from, base);
    piece.end = saturating_sub(to, base);
    int64_t position = original_position_ >= 0
                           ? saturating_add(original_position_, saturating_sub(from, start))
                           : original_position_;
    if (first_) {
      accesses_[index_] = piece;
      positions_[index_] = position;
      first_ = false;
    } else {
      extra_.push_back(piece);
      extra_positions_.push_back(position);
    }
  }

  std::vector<Access>& accesses_;
  std::vector<int64_t>& positions_;
  std::vector<Access>& extra_;
  std::vector<int64_t>& extra_positions_;
  const std::vector<Location>& locations_;
  const LiveBlocks& live_;
  bool first_ = true;
  size_t index_ = 0;
  Access original_;
  int64_t original_position_ = -1;
};

// Calls visit(index, ns) for each of the first `count` accesses to split,
// by issue time (`issued(index)`), then position: the order a stable sort
// by time gives. They come as a few ascending runs (each kind of operation
// in issue order), merged as they are read with a cursor per run, so a
// training trace's millions are never listed again. `visit` may rewrite the
// access it is given and add accesses past `count`.
template <typename ToSplit, typename Issued, typename Visit>
void in_issue_order(uint32_t count, ToSplit&& to_split, Issued&& issued, Visit&& visit) {
  struct Cursor {
    int64_t ns;
    uint32_t index;
    uint32_t end;  // the run's
  };
  auto later = [](const Cursor& a, const Cursor& b) { return std::tie(a.ns, a.index) > std::tie(b.ns, b.index); };
  std::vector<Cursor> runs;
  int64_t last = INT64_MIN;
  for (uint32_t i = 0; i < count; ++i) {
    if (!to_split(i)) continue;
    int64_t ns = issued(i);
    if (runs.empty() || ns < last) {
      if (!runs.empty()) runs.back().end = i;
      runs.push_back({ns, i, count});
    }
    last = ns;
  }
  std::make_heap(runs.begin(), runs.end(), later);
  while (!runs.empty()) {
    std::pop_heap(runs.begin(), runs.end(), later);
    Cursor& run = runs.back();
    visit(run.index, run.ns);
    uint32_t next = run.index + 1;
    while (next < run.end && !to_split(next)) ++next;
    if (next == run.end) {
      runs.pop_back();
      continue;
    }
    run.index = next;
    run.ns = issued(next);
    std::push_heap(runs.begin(), runs.end(), later);
  }
}

bool splittable(OpKind kind) {
  return kind == OpKind::Copy || kind == OpKind::Memset || kind == OpKind::Kernel ||
         kind == OpKind::Collective || kind == OpKind::Message;
}

}  // namespace

void split_by_blocks(std::vector<Access>& accesses, std::vector<int64_t>& positions,
                     const std::vector<Op>& ops,
                     const std::vector<Location>& locations, std::vector<Block> blocks,
                     const std::vector<bool>& holds_blocks, const std::vector<RankCall>& rank_calls) {
  blocks.erase(std::remove_if(blocks.begin(), blocks.end(),
                              [](const Block& b) { return b.bytes <= 0; }),
               blocks.end());
  if (blocks.empty()) return;
  // Accesses to split, in issue order: a block is live for work issued at or
  // after its allocation and before its free.
  std::map<std::pair<uint32_t, ProcessId>, int64_t> rank_call_ns;  // by (op, rank's process)
  for (const RankCall& call : rank_calls) rank_call_ns.emplace(std::pair(call.op, call.process), call.issue_ns);
  auto issued = [&](uint32_t index) {
    const Access& access = accesses[index];
    const Op& op = ops[access.op];
    if (op.kind == OpKind::Collective || op.kind == OpKind::Message) {
      auto call = rank_call_ns.find({access.op, locations[access.location].process});
      if (call != rank_call_ns.end()) return call->second;
    }
    return op.issue_ns;
  };
  auto count = static_cast<uint32_t>(accesses.size());
  // An access meets only the blocks that overlap its allocation: the
  // allocations are dealt out to shares, each swept on a thread of its own
  // (a training trace's 8.6 million accesses took 1.6-2 s on one), the
  // allocations with most accesses first, each to the share with fewest.
  constexpr uint8_t kNoShare = UINT8_MAX;
  // Each access's share, read by every thread while the accesses themselves
  // are rewritten by their own share's; here first 0 for each access to split.
  std::vector<uint8_t> access_share(count, kNoShare);
  std::unordered_map<uint32_t, size_t> per_parent;  // accesses to split, by allocation
  for (uint32_t i = 0; i < count; ++i) {
    const Access& access = accesses[i];
    if (holds_blocks[access.location] && splittable(ops[access.op].kind)) {
      ++per_parent[access.location];
      access_share[i] = 0;
    }
  }
  if (per_parent.empty()) return;
  std::vector<std::pair<size_t, uint32_t>> parents;  // (accesses, allocation)
  for (const auto& [location, accesses_to_it] : per_parent) parents.emplace_back(accesses_to_it, location);
  std::sort(parents.begin(), parents.end(), std::greater<>());
  size_t shares = std::min(trace::detail::default_readers(), parents.size());
  std::vector<uint8_t> share_of(locations.size(), kNoShare);
  std::vector<size_t> load(shares, 0);
  for (const auto& [accesses_to_it, location] : parents) {
    auto least = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    share_of[location] = static_cast<uint8_t>(least);
    load[least] += accesses_to_it;
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (access_share[i] != kNoShare) access_share[i] = share_of[accesses[i].location];
  }
  // Each share's blocks: those overlapping one of its allocations.
  std::vector<std::pair<int64_t, uint32_t>> by_address;  // (address, allocation)
  int64_t widest = 0;
  for (const auto& [accesses_to_it, location] : parents) {
    by_address.emplace_back(locations[location].address, location);
    widest = std::max(widest, locations[location].bytes);
  }
  std::sort(by_address.begin(), by_address.end());
  std::vector<std::vector<uint32_t>> share_blocks(shares);
  std::vector<uint8_t> taken(shares);
  for (uint32_t b = 0; b < blocks.size(); ++b) {
    int64_t block_end = saturating_add(blocks[b].address, blocks[b].bytes);
    std::fill(taken.begin(), taken.end(), 0);
    auto after = std::lower_bound(by_address.begin(), by_address.end(), std::pair(block_end, uint32_t{0}));
    for (auto it = after; it != by_address.begin();) {
      --it;
      const Location& parent = locations[it->second];
      if (saturating_add(parent.address, widest) <= blocks[b].address) break;
      if (saturating_add(parent.address, parent.bytes) <= blocks[b].address) continue;
      uint8_t share = share_of[it->second];
      if (!taken[share]) share_blocks[share].push_back(b), taken[share] = 1;
    }
  }
  std::vector<std::vector<Access>> extra(shares);
  std::vector<std::vector<int64_t>> extra_positions(shares);
  trace::detail::run_on_threads(shares, [&](size_t share) {
    auto to_split = [&](uint32_t index) { return access_share[index] == share; };
    std::vector<uint32_t>& allocated = share_blocks[share];
    std::vector<uint32_t> freed = allocated;
    // Blocks are listed as they were handed out: mostly in order already.
    auto by_alloc = [&](uint32_t a, uint32_t b) { return blocks[a].alloc_ns < blocks[b].alloc_ns; };
    if (!std::is_sorted(allocated.begin(), allocated.end(), by_alloc))
      std::stable_sort(allocated.begin(), allocated.end(), by_alloc);
    std::stable_sort(freed.begin(), freed.end(),
                     [&](uint32_t a, uint32_t b) { return blocks[a].free_ns < blocks[b].free_ns; });
    LiveBlocks live(blocks);
    Splitter splitter(accesses, positions, extra[share], extra_positions[share], locations, live);
    size_t next_alloc = 0, next_free = 0;
    in_issue_order(count, to_split, issued, [&](uint32_t index, int64_t now) {
      // Events up to now in time order; an allocation before a free at the same instant.
      while (true) {
        bool alloc_due = next_alloc < allocated.size() && blocks[allocated[next_alloc]].alloc_ns <= now;
        bool free_due = next_free < freed.size() && blocks[freed[next_free]].free_ns <= now;
        if (!alloc_due && !free_due) break;
        if (alloc_due && (!free_due || blocks[allocated[next_alloc]].alloc_ns <=
                                           blocks[freed[next_free]].free_ns)) {
          live.allocate(allocated[next_alloc++]);
        } else {
          live.release(freed[next_free++]);
        }
      }
      splitter.split(index);
    });
  });
  for (size_t share = 0; share < shares; ++share) {
    accesses.insert(accesses.end(), extra[share].begin(), extra[share].end());
    positions.insert(positions.end(), extra_positions[share].begin(), extra_positions[share].end());
  }
}

}  // namespace apptracer::dvdg
