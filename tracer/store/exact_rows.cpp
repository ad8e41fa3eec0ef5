#include "store/exact_rows.h"

#include <algorithm>

namespace apptracer {

namespace {

std::optional<int64_t> optional_nonzero(uint64_t value) {
  if (value == 0) return std::nullopt;
  return static_cast<int64_t>(value);
}

int64_t count(Database& db, const char* where) {
  Statement rows = db.prepare(std::string("SELECT count(*) FROM exact_launches WHERE ") + where);
  rows.step();
  return rows.int64(0);
}

}  // namespace

ExactRows::ExactRows(Database& db, AddressResolver& resolver)
    : db_(db), resolver_(resolver), launches_(db), accesses_(db) {}

void ExactRows::write_launch(const Record& r) {
  const ExactLaunchRecord& l = r.exact_launch;
  ExactLaunchRow row;
  row.id = static_cast<int64_t>(l.launch_index);
  row.call_correlation_id = optional_nonzero(r.correlation_id);
  row.name_id = optional_nonzero(l.name_id);
  if (l.device >= 0) row.device = l.device;
  if (l.graph_position >= 0) row.graph_position = l.graph_position;
  row.api_start_ns = optional_nonzero(l.api_start_ns);
  row.pages = l.pages;
  row.approximate = l.approximate;
  row.incomplete = l.incomplete;
  launches_.add(row);
  if (l.intervals > 0) pending_[l.launch_index] = Pending{l.api_start_ns, l.intervals};
}

void ExactRows::write_intervals(const Record& r) {
  const ExactIntervalsRecord& c = r.exact_intervals;
  auto launch = pending_.find(c.launch_index);
  if (launch == pending_.end()) return;
  Pending& pending = launch->second;
  for (int i = 0; i < c.count && i < ExactIntervalsRecord::kIntervals; ++i) {
    add_range(static_cast<int64_t>(c.launch_index), pending.ns, c.lo[i], c.hi[i], c.access[i],
              (c.approximate_mask >> i) & 1u);
  }
  pending.remaining -= std::min<uint32_t>(pending.remaining, c.count);
  if (pending.remaining == 0) pending_.erase(launch);
}

void ExactRows::add_range(int64_t launch_id, uint64_t ns, uint64_t lo, uint64_t hi,
                          AccessKind access, bool approximate) {
  while (lo < hi) {
    Resolved at = resolver_.touch(lo, ns);
    ExactAccessRow row;
    row.launch_id = launch_id;
    row.access = access;
    row.approximate = approximate;
    row.lo = static_cast<int64_t>(lo);
    uint64_t end = hi;
    if (at.alloc_id) {
      row.alloc_id = at.alloc_id;
      row.alloc_offset = at.offset;
      end = std::min(hi, lo - static_cast<uint64_t>(*at.offset) +
                             static_cast<uint64_t>(at.alloc_bytes.value_or(0)));
    } else {
      end = std::min(hi, resolver_.next_allocation_start(lo, ns));
    }
    if (end <= lo) end = hi;  // an allocation of no size: the rest is one row
    row.hi = static_cast<int64_t>(end);
    accesses_.add(row);
    lo = end;
  }
}

void ExactRows::flush() {
  launches_.flush();
  accesses_.flush();
}

std::vector<std::pair<std::string, std::string>> ExactRows::finish() {
  flush();
  // Each call's kernels numbered in GPU order (a graph launch runs several;
  // SQLite allows no correlated OFFSET), indexed, then one lookup per launch.
  db_.exec(
      "CREATE TEMP TABLE exact_kernel_positions AS"
      " SELECT id, call_correlation_id, row_number() OVER (PARTITION BY call_correlation_id"
      " ORDER BY gpu_start_ns IS NULL, gpu_start_ns, id) - 1 AS position FROM kernels"
      " WHERE call_correlation_id IN (SELECT call_correlation_id FROM exact_launches);"
      "CREATE INDEX temp.exact_kernel_positions_key"
      " ON exact_kernel_positions (call_correlation_id, position);"
      "UPDATE exact_launches SET kernel_id = (SELECT p.id FROM exact_kernel_positions p"
      " WHERE p.call_correlation_id = exact_launches.call_correlation_id"
      " AND p.position = coalesce(exact_launches.graph_position, 0))"
      " WHERE kernel_id IS NULL AND call_correlation_id IS NOT NULL;"
      "DROP TABLE exact_kernel_positions;");
  if (count(db_, "1") == 0) return {};
  return {{"exact.unlinked_launches", std::to_string(count(db_, "kernel_id IS NULL"))},
          {"exact.approximate_launches", std::to_string(count(db_, "approximate != 0"))},
          {"exact.incomplete_launches", std::to_string(count(db_, "incomplete != 0"))}};
}

}  // namespace apptracer
