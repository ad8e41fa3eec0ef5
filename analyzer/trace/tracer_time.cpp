#include "analyzer/trace/tracer_time.h"

#include <algorithm>
#include <cstdlib>

#include "analyzer/trace/trace.h"
#include "apptracer/saturating.h"

namespace apptracer::trace {

bool runs_between_calls(TracerSite site) {
  switch (site) {
    case TracerSite::HostAllocate:
    case TracerSite::HostFree:
    case TracerSite::FrameworkAllocator:
    case TracerSite::FrameworkRange: return true;
    default: return false;
  }
}

int64_t estimated_ns(const Packed<TracerTimeRow>& row, int64_t clock_ns) {
  int64_t timed =
      std::max<int64_t>(0, saturating_sub(row.timed_ns, clamp_to_int64(static_cast<__int128>(row.timed_calls) * clock_ns)));
  return clamp_to_int64(static_cast<__int128>(timed) * std::max<int64_t>(1, row.sample_every));
}

int64_t clock_read_ns(Trace& trace) {
  return std::max<int64_t>(0, std::atoll(trace.meta("tracer_time_clock_ns").c_str()));
}

TracerTime TracerTime::read(Trace& trace) {
  TracerTime time;
  if (!trace.db().has_table(TracerTimeRow::kTable)) return time;
  int64_t clock_ns = clock_read_ns(trace);
  for (const Packed<TracerTimeRow>& row : trace.rows<TracerTimeRow>()) {
    if (row.end_ns <= row.start_ns || row.timed_calls <= 0) continue;
    if (runs_between_calls(row.site)) {
      time.add(row.process, {row.start_ns, row.end_ns, estimated_ns(row, clock_ns), 0});
    } else if (row.site == TracerSite::ApiCallback) {
      time.add(row.process, {row.start_ns, row.end_ns, 0, estimated_ns(row, clock_ns)});
    }
  }
  time.finish();
  return time;
}

void TracerTime::add(ProcessId process, Stretch stretch) { by_process_[process].push_back(stretch); }

void TracerTime::finish() {
  for (auto& [process, list] : by_process_) {
    // Rows of one stretch (one per site) become one.
    std::sort(list.begin(), list.end(), [](const Stretch& a, const Stretch& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
    });
    std::vector<Stretch> merged;
    for (const Stretch& s : list) {
      if (!merged.empty() && merged.back().start_ns == s.start_ns && merged.back().end_ns == s.end_ns) {
        merged.back().between_ns = saturating_add(merged.back().between_ns, s.between_ns);
        merged.back().in_calls_ns = saturating_add(merged.back().in_calls_ns, s.in_calls_ns);
      } else {
        merged.push_back(s);
      }
      measures_callbacks_ |= s.in_calls_ns > 0;
    }
    list = std::move(merged);
  }
}

const std::vector<TracerTime::Stretch>& TracerTime::stretches(ProcessId process) const {
  static const std::vector<Stretch> kNone;
  auto found = by_process_.find(process);
  return found == by_process_.end() ? kNone : found->second;
}

int64_t TracerTime::between_calls_ns(ProcessId process, int64_t from, int64_t to) const {
  return prorated(process, from, to, &Stretch::between_ns);
}

int64_t TracerTime::in_calls_ns(ProcessId process, int64_t from, int64_t to) const {
  return prorated(process, from, to, &Stretch::in_calls_ns);
}

int64_t TracerTime::prorated(ProcessId process, int64_t from, int64_t to, int64_t Stretch::*part) const {
  if (to <= from) return 0;
  const std::vector<Stretch>& list = stretches(process);
  // Stretches follow each other: from the first that ends after `from`.
  auto s = std::upper_bound(list.begin(), list.end(), from,
                            [](int64_t ns, const Stretch& stretch) { return ns < stretch.end_ns; });
  double total = 0;
  for (; s != list.end() && s->start_ns < to; ++s) {
    total += static_cast<double>((*s).*part) * overlap_share(s->start_ns, s->end_ns, from, to);
  }
  return static_cast<int64_t>(total);
}

double overlap_share(int64_t start, int64_t end, int64_t from, int64_t to) {
  int64_t overlap = std::min(to, end) - std::max(from, start);
  return end <= start || overlap <= 0 ? 0.0 : static_cast<double>(overlap) / static_cast<double>(end - start);
}

}  // namespace apptracer::trace
