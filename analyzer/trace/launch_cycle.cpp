#include "analyzer/trace/launch_cycle.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace apptracer::trace {

namespace {

// Polynomial hashes modulo the Mersenne prime 2^61 - 1: any segment's hash
// from two prefix hashes.
constexpr uint64_t kModulus = (uint64_t{1} << 61) - 1;
constexpr uint64_t kBase = 0x1f3d5b79a2c4e68bULL % kModulus;

uint64_t mul_mod(uint64_t a, uint64_t b) {
  unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  uint64_t sum = static_cast<uint64_t>(product & kModulus) + static_cast<uint64_t>(product >> 61);
  return sum >= kModulus ? sum - kModulus : sum;
}

class SegmentHashes {
 public:
  explicit SegmentHashes(const std::vector<int64_t>& symbols)
      : prefix_(symbols.size() + 1), power_(symbols.size() + 1) {
    power_[0] = 1;
    for (size_t i = 0; i < symbols.size(); ++i) {
      uint64_t value = static_cast<uint64_t>(symbols[i]) % (kModulus - 1) + 1;
      prefix_[i + 1] = (mul_mod(prefix_[i], kBase) + value) % kModulus;
      power_[i + 1] = mul_mod(power_[i], kBase);
    }
  }

  // The content of [begin, end), its length folded in.
  uint64_t of(size_t begin, size_t end) const {
    uint64_t hash = (prefix_[end] + kModulus - mul_mod(prefix_[begin], power_[end - begin])) % kModulus;
    return hash ^ (static_cast<uint64_t>(end - begin) * 0x9e3779b97f4a7c15ULL);
  }

 private:
  std::vector<uint64_t> prefix_;
  std::vector<uint64_t> power_;
};

// Each distinct symbol as 0..count-1, and where each occurs, in order.
struct Occurrences {
  std::vector<uint32_t> ids;        // per launch
  std::vector<size_t> offsets;      // symbol s occurs at at[offsets[s] .. offsets[s + 1])
  std::vector<size_t> at;

  explicit Occurrences(const std::vector<int64_t>& symbols) : ids(symbols.size()) {
    std::unordered_map<int64_t, uint32_t> dense;
    std::vector<size_t> counts;
    for (size_t i = 0; i < symbols.size(); ++i) {
      auto [found, added] = dense.try_emplace(symbols[i], static_cast<uint32_t>(counts.size()));
      if (added) counts.push_back(0);
      ids[i] = found->second;
      ++counts[found->second];
    }
    offsets.assign(counts.size() + 1, 0);
    for (size_t s = 0; s < counts.size(); ++s) offsets[s + 1] = offsets[s] + counts[s];
    at.resize(symbols.size());
    std::vector<size_t> next(offsets.begin(), offsets.end() - 1);
    for (size_t i = 0; i < ids.size(); ++i) at[next[ids[i]]++] = i;
  }

  size_t symbols() const { return offsets.size() - 1; }
  const size_t* begin(uint32_t s) const { return at.data() + offsets[s]; }
  const size_t* end(uint32_t s) const { return at.data() + offsets[s + 1]; }
};

// A candidate anchor's cycle: `copies` segments alike, `period` launches
// each, the first of them beginning at `first`.
struct Cycle {
  size_t period = 0;
  size_t first = 0;
  size_t copies = 0;
  size_t steps = 0;       // the anchor's segments from `first` on about a period long
  size_t long_steps = 0;  // and those far longer that hold a copy of the cycle
  size_t short_segments = 0;  // and those far shorter: the anchor occurring in other work
  size_t steps_end = 0;   // where the last of them ends
  uint32_t anchor = 0;

  // The launches its steps hold: a cycle that covers less than another is
  // not the program's step, however short.
  size_t covered() const { return (steps + long_steps) * period; }
};

// Whether symbols [at, at + length), longer than the cycle [first, first +
// period), is the cycle with other work inserted somewhere in it: its
// longest common prefix with the cycle, then the rest of the cycle as its
// suffix. An evaluation every few steps lands inside the anchor's segment
// wherever the anchor lies in the training step.
bool holds_cycle(const SegmentHashes& hashes, size_t first, size_t period, size_t at, size_t length) {
  size_t low = 0, high = period;  // the common prefix: at least low, at most high
  while (low < high) {
    size_t mid = (low + high + 1) / 2;
    if (hashes.of(at, at + mid) == hashes.of(first, first + mid)) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  size_t rest = period - low;
  return hashes.of(at + length - rest, at + length) == hashes.of(first + low, first + period);
}

// The most common segment the anchor's occurrences cut; ties: the one that
// appears first.
Cycle most_common_segment(const Occurrences& occurrences, const SegmentHashes& hashes, uint32_t anchor,
                          size_t launches, std::vector<std::pair<uint64_t, size_t>>& scratch) {
  scratch.clear();
  for (const size_t* at = occurrences.begin(anchor); at != occurrences.end(anchor); ++at) {
    size_t end = at + 1 != occurrences.end(anchor) ? at[1] : launches;
    scratch.emplace_back(hashes.of(*at, end), *at);
  }
  std::sort(scratch.begin(), scratch.end());
  Cycle best;
  best.anchor = anchor;
  for (size_t run = 0; run < scratch.size();) {
    size_t run_end = run;
    while (run_end < scratch.size() && scratch[run_end].first == scratch[run].first) ++run_end;
    size_t copies = run_end - run;
    if (copies > best.copies || (copies == best.copies && scratch[run].second < best.first)) {
      best.copies = copies;
      best.first = scratch[run].second;
    }
    run = run_end;
  }
  const size_t* first = std::lower_bound(occurrences.begin(anchor), occurrences.end(anchor), best.first);
  best.period = (first + 1 != occurrences.end(anchor) ? first[1] : launches) - best.first;
  // Steps that differ from the cycle by a few launches (a loss read back
  // every tenth step) are steps all the same; a segment far shorter or
  // longer (the rest of a step cut by a second occurrence) is not one, nor
  // is the last, which runs to the end of the run (what follows the loop
  // may make it as long as a step). A far longer one that holds a copy of
  // the cycle with other work inserted (an evaluation every few steps) is a
  // step all the same: counted apart, so that a cycle whose anchor the other
  // work lacks reaches as far as one whose anchor it has.
  for (const size_t* at = first; at + 1 < occurrences.end(anchor); ++at) {
    size_t length = at[1] - *at;
    size_t off = length > best.period ? length - best.period : best.period - length;
    if (4 * off <= best.period) {
      ++best.steps;
    } else if (length > best.period && holds_cycle(hashes, best.first, best.period, *at, length)) {
      ++best.long_steps;
    } else {
      if (length < best.period) ++best.short_segments;
      continue;
    }
    best.steps_end = at[1];
  }
  return best;
}

// No symbol occurs, over the cycle's steps, once a step more than the cycle
// holds it: a symbol the cycle misses that occurs once a step, or the anchor
// itself when it occurs twice a step (a memset right after another would
// make each step two "steps", a long one and one of a single launch), means
// the cycle is not the step. Counted over its steps, not its exact copies
// (a kernel of each of twelve layers occurs twelve times a step, and the few
// steps that are not exact copies would add up to a thirteenth), and from
// its first step to the end of its last (what the program does after its
// loop, a copy per tensor as it saves or moves the model, is no step's).
// Between them lie one fewer of what cuts a step in two than there are
// steps: hence the one less.
bool holds_every_frequent_symbol(const Occurrences& occurrences, const Cycle& cycle) {
  std::vector<size_t> in_cycle(occurrences.symbols(), 0);
  for (size_t i = cycle.first; i < cycle.first + cycle.period; ++i) ++in_cycle[occurrences.ids[i]];
  for (uint32_t s = 0; s < occurrences.symbols(); ++s) {
    const size_t* from = std::lower_bound(occurrences.begin(s), occurrences.end(s), cycle.first);
    const size_t* to = std::lower_bound(from, occurrences.end(s), cycle.steps_end);
    if (static_cast<size_t>(to - from) + 1 >= (in_cycle[s] + 1) * (cycle.steps + cycle.long_steps)) return false;
  }
  return true;
}

// Cycles covering at least this share of the most any covers, or all of it
// but one of its cycles, are alike in reach: a multiple of the step covers
// as much as the step itself, give or take a step at either end.
constexpr double kNearestCover = 0.9;

// How many of the best candidates are checked for holding every frequent
// symbol (each check is linear in symbols).
constexpr size_t kCheckedCandidates = 16;

}  // namespace

std::optional<LaunchCycle> find_launch_cycle(const std::vector<int64_t>& symbols) {
  size_t launches = symbols.size();
  if (launches < kMinSteps) return std::nullopt;
  Occurrences occurrences(symbols);
  SegmentHashes hashes(symbols);
  std::vector<Cycle> candidates;
  std::vector<std::pair<uint64_t, size_t>> scratch;
  for (uint32_t s = 0; s < occurrences.symbols(); ++s) {
    if (static_cast<size_t>(occurrences.end(s) - occurrences.begin(s)) < kMinSteps) continue;
    Cycle cycle = most_common_segment(occurrences, hashes, s, launches, scratch);
    if (cycle.copies < 2 || cycle.steps < kMinSteps) continue;
    double loop = static_cast<double>(cycle.steps_end - cycle.first);
    if (static_cast<double>(cycle.covered()) < kMinCycleShare * loop ||
        loop < kMinLoopShare * static_cast<double>(launches - cycle.first))
      continue;
    candidates.push_back(cycle);
  }
  // The cycles that reach furthest are checked; of those that hold their
  // symbols, the shortest among the furthest-reaching is the step (a run of
  // one launch repeated at the very end is short but covers little).
  std::sort(candidates.begin(), candidates.end(), [](const Cycle& a, const Cycle& b) {
    return std::make_tuple(b.covered(), a.period, a.first, a.anchor) <
           std::make_tuple(a.covered(), b.period, b.first, b.anchor);
  });
  std::vector<Cycle> steps;
  for (size_t c = 0; c < candidates.size() && c < kCheckedCandidates; ++c) {
    if (holds_every_frequent_symbol(occurrences, candidates[c])) steps.push_back(candidates[c]);
  }
  if (steps.empty()) return std::nullopt;
  double reach = static_cast<double>(steps.front().covered());
  double near = std::min(kNearestCover * reach, reach - static_cast<double>(steps.front().period));
  const Cycle* best = &steps.front();
  for (const Cycle& cycle : steps) {
    if (static_cast<double>(cycle.covered()) < near) break;
    if (std::tie(cycle.period, cycle.short_segments, cycle.first) <
        std::tie(best->period, best->short_segments, best->first))
      best = &cycle;
  }
  LaunchCycle found;
  found.period = best->period;
  // A segment far shorter than a step is no step: the anchor occurring in
  // other work (an evaluation's forward passes every few steps, each
  // beginning as a step does) makes that work part of the step before. The
  // last segment, which runs to the end, may be a step cut short (steps.h
  // ends it), unless it follows such other work: then it is more of it.
  const size_t* from = std::lower_bound(occurrences.begin(best->anchor), occurrences.end(best->anchor), best->first);
  const size_t* end = occurrences.end(best->anchor);
  bool after_other_work = false;
  for (const size_t* at = from; at != end; ++at) {
    bool step = at + 1 == end ? !after_other_work : 4 * (at[1] - *at) + found.period >= 4 * found.period;
    if (step) found.starts.push_back(*at);
    after_other_work = !step;
  }
  return found;
}

size_t first_steady_step(const std::vector<int64_t>& symbols,
                         const std::vector<std::pair<size_t, size_t>>& steps) {
  SegmentHashes hashes(symbols);
  std::unordered_map<uint64_t, size_t> alike;
  std::vector<uint64_t> content;
  content.reserve(steps.size());
  for (auto [begin, end] : steps) {
    content.push_back(hashes.of(begin, std::max(begin, end)));
    ++alike[content.back()];
  }
  size_t most = 0;
  for (const auto& [hash, count] : alike) most = std::max(most, count);
  if (most < 2) return 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (alike[content[i]] == most) return i;
  }
  return 0;
}

}  // namespace apptracer::trace
