#include "analyzer/diagnose/analyses.h"

#include <algorithm>
#include <array>
#include <functional>
#include <string_view>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "analyzer/trace/by_kernel_name.h"
#include "analyzer/trace/short_names.h"

namespace apptracer::diagnose {

namespace {

double percent(int64_t part, int64_t whole) {
  return whole > 0 ? std::round(1000.0 * part / whole) / 10.0 : 0.0;
}

struct DeviceWork {
  Intervals kernels, memory;
  const Intervals* all = nullptr;  // every piece of GPU work: the facts' busy intervals
};

std::map<int64_t, DeviceWork> device_work(const TraceFacts& facts) {
  std::map<int64_t, DeviceWork> work;
  // Each device's kernels held at their count: grown by doubling, a million
  // kernels' intervals took twice their room while every analysis ran.
  std::map<int64_t, size_t> kernels;
  for (const Kernel& k : facts.ops().kernels()) {
    if (k.timed()) ++kernels[k.row->device.value_or(0)];
  }
  for (const auto& [device, count] : kernels) work[device].kernels.reserve(count);
  for (const Kernel& k : facts.ops().kernels()) {
    if (k.timed())
      work[k.row->device.value_or(0)].kernels.emplace_back(*k.row->gpu_start_ns, *k.row->gpu_end_ns);
  }
  for (const auto* list : {&facts.ops().copies(), &facts.ops().memsets()}) {
    for (const Transfer& t : *list) {
      if (t.timed()) work[t.device().value_or(0)].memory.emplace_back(*t.gpu_start_ns(), *t.gpu_end_ns());
    }
  }
  for (auto& [device, w] : work) {
    merge_intervals(w.kernels);
    merge_intervals(w.memory);
    w.all = &facts.busy_on(device);
  }
  return work;
}

std::string copy_type(const Transfer& t) {
  return t.is_memset() ? "memory: memset" : "memory: " + std::string(to_string(t.kind())) + " copy";
}

Table temporal_breakdown(const std::map<int64_t, DeviceWork>& work) {
  Table table{"temporal_breakdown",
              {"device", "span_ns", "compute_ns", "memory_only_ns", "idle_ns", "compute_pct",
               "memory_only_pct", "idle_pct"},
              {}};
  for (auto& [device, w] : work) {
    const Intervals& all = *w.all;
    if (all.empty()) continue;
    int64_t span = elapsed_ns(all.front().first, all.back().second);
    int64_t compute = covered_ns(w.kernels, INT64_MIN, INT64_MAX);
    int64_t busy = covered_ns(all, INT64_MIN, INT64_MAX);
    int64_t memory = busy - compute;
    table.rows.push_back({device, span, compute, memory, span - busy, percent(compute, span),
                          percent(memory, span), percent(span - busy, span)});
  }
  return table;
}

// Per device, for each gap between its busy intervals (the i-th ends as
// interval i + 1 starts), the issue time of the work starting as it ends:
// of work starting together, the first listed (kernels, copies, then
// memsets); none where no work was found. Found in a pass over the work,
// 8 bytes a gap, not a list of all of it by start (16 bytes a piece, a
// million kernels, and a stable sort's buffer).
struct GapIssues {
  std::vector<int64_t> issued;
  std::vector<bool> found;
};

// Each device's busy intervals, by device.
std::map<int64_t, const Intervals*> busy_devices(const TraceFacts& facts) {
  std::map<int64_t, const Intervals*> busy;
  for (const auto& [device, intervals] : facts.busy_by_device()) busy[device] = &intervals;
  return busy;
}

std::map<int64_t, GapIssues> gap_issue_times(const TraceFacts& facts, const std::map<int64_t, const Intervals*>& busy) {
  std::map<int64_t, GapIssues> gaps;
  for (const auto& [device, all] : busy) {
    size_t count = all->empty() ? 0 : all->size() - 1;
    gaps[device].issued.assign(count, 0);
    gaps[device].found.assign(count, false);
  }
  auto add = [&](std::optional<int64_t> device, std::optional<int64_t> start,
                 std::optional<int64_t> correlation, std::optional<int64_t> api_start) {
    if (!start) return;
    auto on = busy.find(device.value_or(0));
    if (on == busy.end()) return;
    const Intervals& all = *on->second;
    if (all.size() < 2) return;
    auto ends = std::lower_bound(all.begin() + 1, all.end(), *start,
                                 [](const std::pair<int64_t, int64_t>& interval, int64_t ns) { return interval.first < ns; });
    if (ends == all.end() || ends->first != *start) return;
    GapIssues& gap = gaps[on->first];
    size_t i = static_cast<size_t>(ends - all.begin()) - 1;
    if (gap.found[i]) return;
    const HostCall* call = facts.ops().call(correlation);
    gap.issued[i] = call ? call->start_ns() : api_start.value_or(*start);
    gap.found[i] = true;
  };
  for (const Kernel& k : facts.ops().kernels())
    add(k.row->device, k.row->gpu_start_ns, k.row->call_correlation_id, k.row->api_start_ns);
  for (const auto* list : {&facts.ops().copies(), &facts.ops().memsets()}) {
    for (const Transfer& t : *list) add(t.device(), t.gpu_start_ns(), t.correlation(), t.api_start_ns());
  }
  return gaps;
}

}  // namespace

// Made from the busy intervals alone, before the kernels' own intervals
// (all_analyses): beside them its gaps set the report's peak.
Table idle_breakdown(const TraceFacts& facts) {
  Table table{"idle_breakdown",
              {"device", "gaps", "idle_ns", "host_wait_ns", "launch_wait_ns", "host_wait_pct"},
              {}};
  std::map<int64_t, const Intervals*> busy = busy_devices(facts);
  std::map<int64_t, GapIssues> issued = gap_issue_times(facts, busy);
  for (const auto& [device, intervals] : busy) {
    const GapIssues& issue = issued[device];
    const Intervals& all = *intervals;
    int64_t idle = 0, host = 0, gaps = 0;
    for (size_t i = 0; i + 1 < all.size(); ++i) {
      int64_t start = all[i].second, end = all[i + 1].first;
      if (end <= start) continue;
      ++gaps;
      idle = saturating_add(idle, elapsed_ns(start, end));
      int64_t at = issue.found[i] ? issue.issued[i] : end;
      host = saturating_add(host, elapsed_ns(start, std::min(at, end)));
    }
    table.rows.push_back({device, gaps, idle, host, idle - host, percent(host, idle)});
  }
  return table;
}

namespace {

Table copy_compute_overlap(const std::map<int64_t, DeviceWork>& work) {
  Table table{"copy_compute_overlap", {"device", "copy_ns", "overlapped_ns", "overlap_pct"}, {}};
  for (auto& [device, w] : work) {
    int64_t copy = covered_ns(w.memory, INT64_MIN, INT64_MAX);
    int64_t overlapped = 0;
    for (const auto& [start, end] : w.memory) {
      overlapped = saturating_add(overlapped, covered_ns(w.kernels, start, end));
    }
    table.rows.push_back({device, copy, overlapped, percent(overlapped, copy)});
  }
  return table;
}

}  // namespace


Table kernel_breakdown(const TraceFacts& facts) {
  Table table{"kernel_breakdown", {"type", "name", "count", "gpu_ns", "pct_of_gpu_time"}, {}};
  set_text_form(table, "name", trace::short_kernel_name_cell);
  // By (type, name): names are the trace's (it outlives the table) or
  // the few copy types, held here; not a string made per kernel.
  std::map<std::pair<std::string_view, std::string_view>, std::pair<int64_t, int64_t>> rows;
  std::set<std::string> copy_types;
  int64_t total = 0;
  trace::ByKernelName<std::pair<int64_t, int64_t>> kernels;
  for (const Kernel& k : facts.ops().kernels()) {
    if (!k.timed()) continue;
    auto& row = kernels[k.name];
    ++row.first;
    row.second = saturating_add(row.second, k.gpu_ns());
    total = saturating_add(total, k.gpu_ns());
  }
  for (const auto& [name, row] : kernels) rows[{"computation", name}] = row;
  for (const auto* list : {&facts.ops().copies(), &facts.ops().memsets()}) {
    for (const Transfer& t : *list) {
      if (!t.timed()) continue;
      auto& row = rows[{"memory", *copy_types.insert(copy_type(t)).first}];
      ++row.first;
      row.second = saturating_add(row.second, t.gpu_ns());
      total = saturating_add(total, t.gpu_ns());
    }
  }
  std::vector<std::pair<std::pair<std::string_view, std::string_view>, std::pair<int64_t, int64_t>>> sorted(
      rows.begin(), rows.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  for (auto& [key, row] : sorted) {
    table.rows.push_back(
        {std::string(key.first), std::string(key.second), row.first, row.second, percent(row.second, total)});
  }
  return table;
}

Table launch_statistics(const TraceFacts& facts, const Thresholds& limits) {
  Table table{"launch_statistics",
              {"name", "launches", "launch_call_mean_ns", "gpu_mean_ns", "launch_delay_mean_ns",
               "launch_delay_max_ns", "short_launches"},
              {}};
  set_text_form(table, "name", trace::short_kernel_name_cell);
  struct Stats {
    int64_t count = 0, call = 0, calls = 0, gpu = 0, delay = 0, delays = 0, delay_max = 0,
            short_count = 0;
  };
  trace::ByKernelName<Stats> by_name;
  for (const Kernel& k : facts.ops().kernels()) {
    Stats& s = by_name[k.name];
    ++s.count;
    if (const HostCall* call = facts.ops().call(k.row->call_correlation_id)) {
      s.call = saturating_add(s.call, call->duration());
      ++s.calls;
      if (k.row->gpu_start_ns) {
        int64_t delay = saturating_sub(*k.row->gpu_start_ns, call->start_ns());
        s.delay = saturating_add(s.delay, delay);
        ++s.delays;
        s.delay_max = std::max(s.delay_max, delay);
      }
    }
    if (k.timed()) {
      s.gpu = saturating_add(s.gpu, k.gpu_ns());
      s.short_count += k.gpu_ns() < limits.short_kernel_ns;
    }
  }
  for (auto& [name, s] : by_name) {
    table.rows.push_back({std::string(name), s.count, s.calls ? s.call / s.calls : 0, s.gpu / s.count,
                          s.delays ? s.delay / s.delays : 0, s.delay_max, s.short_count});
  }
  return table;
}

std::vector<Series> bandwidth_series(const TraceFacts& facts, int bins) {
  std::map<std::string, std::vector<double>> bytes;
  int64_t span = std::max<int64_t>(1, facts.span_ns());
  double width = static_cast<double>(span) / bins;
  for (const Transfer& t : facts.ops().copies()) {
    if (!t.timed() || t.gpu_ns() <= 0) continue;
    std::vector<double>& series = bytes[std::string(to_string(t.kind()))];
    series.resize(bins, 0.0);
    // Spread the copy's bytes evenly over its GPU time.
    double rate = static_cast<double>(t.bytes()) / t.gpu_ns();
    int64_t from = saturating_sub(*t.gpu_start_ns(), facts.start_ns());
    int64_t to = saturating_sub(*t.gpu_end_ns(), facts.start_ns());
    int first = static_cast<int>(std::clamp(from / width, 0.0, static_cast<double>(bins)));
    for (int b = first; b < bins && b * width < to; ++b) {
      double overlap = std::min<double>(to, (b + 1) * width) - std::max<double>(from, b * width);
      if (overlap > 0) series[b] += rate * overlap;
    }
  }
  std::vector<Series> out;
  for (auto& [kind, series] : bytes) {
    Series s{kind, {}};
    for (int b = 0; b < bins; ++b)
      s.points.emplace_back(facts.origin.since(facts.start_ns() + static_cast<int64_t>(b * width)),
                            series[b] / width);  // bytes/ns = GB/s
    out.push_back(std::move(s));
  }
  return out;
}

Table memory_bandwidth(const TraceFacts& facts) {
  Table table{"memory_bandwidth",
              {"kind", "count", "bytes", "gpu_ns", "mean_gbps", "peak_gbps_in_1pct_bins"},
              {}};
  std::map<std::string, std::tuple<int64_t, int64_t, int64_t>> totals;
  for (const Transfer& t : facts.ops().copies()) {
    if (!t.timed()) continue;
    auto& [count, bytes, ns] = totals[std::string(to_string(t.kind()))];
    ++count;
    bytes = saturating_add(bytes, t.bytes());
    ns = saturating_add(ns, t.gpu_ns());
  }
  std::map<std::string, double> peak;
  for (const Series& s : bandwidth_series(facts, 100)) {
    for (auto& [at, gbps] : s.points) peak[s.name] = std::max(peak[s.name], gbps);
  }
  for (auto& [kind, total] : totals) {
    auto [count, bytes, ns] = total;
    table.rows.push_back({kind, count, bytes, ns,
                          ns > 0 ? static_cast<double>(bytes) / ns : 0.0, peak[kind]});
  }
  return table;
}

namespace {

// One stream's work: when each piece was issued (its queue grows by one)
// and when it finished on the GPU (it shrinks by one), ns since the origin,
// each list sorted: 8 bytes per change, not 16 with its sign, merged by time
// as they are read (a training trace has millions).
struct StreamQueue {
  std::vector<int64_t> issued, finished;

  size_t changes() const { return issued.size() + finished.size(); }

  // Calls `change(ns, delta)` for each change by time, a finish before an
  // issue at the same time.
  template <typename Change>
  void each_change(Change&& change) const {
    size_t i = 0, f = 0;
    while (i < issued.size() || f < finished.size()) {
      if (f < finished.size() && (i == issued.size() || finished[f] <= issued[i])) {
        change(finished[f++], -1);
      } else {
        change(issued[i++], +1);
      }
    }
  }
};

using QueueChanges = std::map<int64_t, StreamQueue>;  // by stream

QueueChanges queue_changes(const TraceFacts& facts) {
  auto for_each_work = [&](auto&& see) {
    for (const Kernel& k : facts.ops().kernels())
      see(k.row->stream, k.row->call_correlation_id, k.row->api_start_ns, k.row->gpu_end_ns);
    for (const auto* list : {&facts.ops().copies(), &facts.ops().memsets()}) {
      for (const Transfer& t : *list) see(t.stream(), t.correlation(), t.api_start_ns(), t.gpu_end_ns());
    }
  };
  // Each stream's room made once, for at most one issue and one finish per
  // piece of work: a training trace's millions, grown by doubling, held
  // nearly twice what they needed.
  std::map<int64_t, size_t> most;
  for_each_work([&](NullableInt stream, NullableInt, NullableInt, NullableInt end) {
    if (end) ++most[stream.value_or(0)];
  });
  QueueChanges changes;
  for_each_work([&](NullableInt stream, NullableInt correlation, NullableInt api_start, NullableInt end) {
    if (!end) return;
    const HostCall* call = facts.ops().call(correlation);
    std::optional<int64_t> issued = call ? std::optional<int64_t>(call->start_ns()) : api_start.optional();
    if (!issued) return;
    auto [queue, added] = changes.try_emplace(stream.value_or(0));
    if (added) {
      queue->second.issued.reserve(most[queue->first]);
      queue->second.finished.reserve(most[queue->first]);
    }
    queue->second.issued.push_back(facts.origin.since(*issued));
    queue->second.finished.push_back(facts.origin.since(*end));
  });
  for (auto& [stream, queue] : changes) {
    std::sort(queue.issued.begin(), queue.issued.end());
    std::sort(queue.finished.begin(), queue.finished.end());
  }
  return changes;
}

}  // namespace

std::vector<Series> queue_series(const TraceFacts& facts, size_t limit) {
  std::vector<Series> out;
  for (const auto& [stream, queue] : queue_changes(facts)) {
    Series s{"stream " + std::to_string(stream), {}};
    int depth = 0;
    size_t count = queue.changes();
    size_t step = std::max<size_t>(1, count / std::max<size_t>(1, limit));
    size_t i = 0;
    queue.each_change([&](int64_t ns, int delta) {
      depth += delta;
      if (i % step == 0 || i + 1 == count) s.points.emplace_back(ns, depth);
      ++i;
    });
    out.push_back(std::move(s));
  }
  return out;
}

Table queue_length(const TraceFacts& facts) {
  Table table{"queue_length", {"stream", "operations", "mean_queued", "max_queued"}, {}};
  // From the changes, not from a series of every one of them: a training
  // trace's millions of points need not be held.
  for (const auto& [stream, queue] : queue_changes(facts)) {
    double weighted = 0;
    double most = 0;
    int depth = 0;
    // Each change but the last, weighed by the time to the next.
    std::optional<std::pair<int64_t, int>> previous;
    std::optional<int64_t> first;
    queue.each_change([&](int64_t ns, int delta) {
      if (previous) {
        depth += previous->second;
        weighted += static_cast<double>(depth) * elapsed_ns(previous->first, ns);
        most = std::max(most, static_cast<double>(depth));
      } else {
        first = ns;
      }
      previous = {ns, delta};
    });
    int64_t span = first ? elapsed_ns(*first, previous->first) : 0;
    table.rows.push_back({std::to_string(stream), static_cast<int64_t>(queue.changes() / 2),
                          span > 0 ? weighted / span : 0.0, most});
  }
  return table;
}

Table kernel_sequences(const TraceFacts& facts) {
  Table table{"kernel_sequences", {"sequence", "length", "count"}, {}};
  // Sequences of name ids, counted; the names joined only for the few
  // shown (a training trace's million kernels have names of up to
  // thousands of characters, and a few hundred distinct ones).
  std::vector<std::string_view> names;
  trace::ByKernelName<uint32_t> ids;  // each name's id + 1, in the order first seen
  auto name_id = [&](std::string_view name) {
    uint32_t& id = ids[name];
    if (id == 0) {
      names.push_back(name);
      id = static_cast<uint32_t>(names.size());
    }
    return id - 1;
  };
  // Each stream's kernels as positions in the kernel list, in the GPU's
  // order: ids nearly follow it (the tracer numbers a buffer's launches as
  // it writes them). (start, name) pairs held 16 bytes per kernel, 18 MB at
  // the report's peak on a million kernels; a position is 4.
  const std::vector<Kernel>& kernels = facts.ops().kernels();
  auto start_of = [&](uint32_t kernel) { return *kernels[kernel].row->gpu_start_ns; };
  std::map<int64_t, std::vector<uint32_t>> by_stream;
  std::map<int64_t, size_t> per_stream;
  for (const Kernel& k : kernels) {
    if (k.row->gpu_start_ns) ++per_stream[k.row->stream.value_or(0)];
  }
  for (const auto& [stream, count] : per_stream) by_stream[stream].reserve(count);
  for (uint32_t i = 0; i < kernels.size(); ++i) {
    if (kernels[i].row->gpu_start_ns) by_stream[kernels[i].row->stream.value_or(0)].push_back(i);
  }
  constexpr uint32_t kNone = UINT32_MAX;  // the third name of a sequence of two
  std::map<std::array<uint32_t, 3>, int64_t> counts;
  for (auto& [stream, list] : by_stream) {
    auto by_start = [&](uint32_t a, uint32_t b) { return start_of(a) < start_of(b); };
    if (!std::is_sorted(list.begin(), list.end(), by_start)) std::stable_sort(list.begin(), list.end(), by_start);
    uint32_t before_last = kNone, last = kNone;
    for (uint32_t kernel : list) {
      uint32_t name = name_id(kernels[kernel].name);
      if (last != kNone) ++counts[{last, name, kNone}];
      if (before_last != kNone) ++counts[{before_last, last, name}];
      before_last = last;
      last = name;
    }
    std::vector<uint32_t>().swap(list);
  }
  constexpr size_t kShown = 10;
  std::vector<int64_t> most;
  for (const auto& [sequence, count] : counts) most.push_back(count);
  size_t top = std::min(kShown, most.size());
  std::nth_element(most.begin(), most.begin() + static_cast<std::ptrdiff_t>(top ? top - 1 : 0), most.end(),
                   std::greater<int64_t>());
  int64_t least_shown = std::max<int64_t>(2, top ? most[top - 1] : 2);
  // (sequence, length, count) of those that may be shown, the most frequent
  // first, then by their names.
  std::vector<std::tuple<std::string, int64_t, int64_t>> shown;
  for (const auto& [sequence, count] : counts) {
    if (count < least_shown) continue;
    std::string text;
    int64_t length = 0;
    for (uint32_t name : sequence) {
      if (name == kNone) continue;
      (text += length++ ? " -> " : "") += names[name];
    }
    shown.emplace_back(std::move(text), length, count);
  }
  std::sort(shown.begin(), shown.end(), [](const auto& a, const auto& b) {
    return std::get<2>(a) != std::get<2>(b) ? std::get<2>(a) > std::get<2>(b) : std::get<0>(a) < std::get<0>(b);
  });
  for (size_t i = 0; i < shown.size() && i < kShown; ++i)
    table.rows.push_back({std::get<0>(shown[i]), std::get<1>(shown[i]), std::get<2>(shown[i])});
  return table;
}

Table temporal_breakdown(const TraceFacts& facts) { return temporal_breakdown(device_work(facts)); }

Table copy_compute_overlap(const TraceFacts& facts) { return copy_compute_overlap(device_work(facts)); }

std::vector<Table> all_analyses(const TraceFacts& facts, const Thresholds& limits) {
  // The two tables that need no intervals first, so that their transients
  // are not on top of the kernels' (a training trace's million kernels).
  Table queue = queue_length(facts);
  Table sequences = kernel_sequences(facts);
  Table idle = idle_breakdown(facts);
  // Each device's kernel and memory intervals once for the two tables made from them.
  std::map<int64_t, DeviceWork> work = device_work(facts);
  std::vector<Table> tables;
  tables.push_back(temporal_breakdown(work));
  tables.push_back(std::move(idle));
  tables.push_back(kernel_breakdown(facts));
  tables.push_back(launch_statistics(facts, limits));
  tables.push_back(copy_compute_overlap(work));
  tables.push_back(memory_bandwidth(facts));
  tables.push_back(std::move(queue));
  tables.push_back(std::move(sequences));
  return tables;
}

}  // namespace apptracer::diagnose
