#include "analyzer/trace/migration_groups.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "apptracer/saturating.h"

namespace apptracer::trace {

std::vector<MigrationGroup> group_migrations(const UmTrace& trace) {
  using Key = std::tuple<UmCauseKind, int64_t, int64_t, int64_t, int64_t>;
  struct Pending {
    MigrationGroup group;
    std::map<int64_t, int64_t> bytes_by_cause;
  };
  std::map<Key, Pending> groups;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const UmEvent& event = trace.events[i];
    const UmCause& cause = trace.causes[i];
    if (!event.is_migration() || !event.alloc_id || cause.kind == UmCauseKind::None) continue;
    Key key{cause.kind, cause.row, *event.alloc_id, event.src, event.dst};
    auto [it, inserted] = groups.try_emplace(key);
    MigrationGroup& group = it->second.group;
    if (inserted) {
      group.cause = cause;
      group.alloc_id = *event.alloc_id;
      group.from = event.src;
      group.to = event.dst;
      group.start_ns = event.start_ns;
      group.end_ns = event.end_ns;
    }
    group.bytes = saturating_add(group.bytes, event.bytes);
    group.start_ns = std::min(group.start_ns, event.start_ns);
    group.end_ns = std::max(group.end_ns, event.end_ns);
    int64_t& by_cause = it->second.bytes_by_cause[event.cause];
    by_cause = saturating_add(by_cause, event.bytes);
  }
  std::vector<MigrationGroup> out;
  out.reserve(groups.size());
  for (auto& [key, pending] : groups) {
    auto most = std::max_element(
        pending.bytes_by_cause.begin(), pending.bytes_by_cause.end(),
        [](const auto& a, const auto& b) { return a.second < b.second; });
    pending.group.migration_cause = static_cast<UmMigrationCause>(most->first);
    out.push_back(pending.group);
  }
  return out;
}

}  // namespace apptracer::trace
