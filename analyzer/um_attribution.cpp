#include "um_attribution.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "apptracer/saturating.h"

namespace apptracer {

namespace {

// The GPU windows of each device's work, by start, with the latest end so
// far so that a lookup can stop scanning back early.
class GpuWindows {
 public:
  void add(int64_t device, int64_t start, int64_t end, UmCause work) {
    devices_[device].push_back({start, end, work, 0});
    starts_.push_back(start);
  }

  void finish() {
    for (auto& [device, windows] : devices_) {
      std::sort(windows.begin(), windows.end());
      int64_t latest = INT64_MIN;
      for (Window& window : windows) latest = window.latest_end = std::max(latest, window.end);
    }
    std::sort(starts_.begin(), starts_.end());
  }

  // The work running on `device` at `ns`: a kernel before a copy or memset
  // (a kernel faults, the others run beside it), then the one that started
  // last. Without `kernels`, copies and memsets only.
  std::optional<UmCause> at(int64_t device, int64_t ns, bool kernels = true) const {
    auto found = devices_.find(device);
    if (found == devices_.end()) return std::nullopt;
    const std::vector<Window>& windows = found->second;
    auto after = std::upper_bound(windows.begin(), windows.end(), ns,
                                  [](int64_t t, const Window& w) { return t < w.start; });
    std::optional<UmCause> running;
    for (auto it = after; it != windows.begin();) {
      --it;
      if (it->latest_end < ns) break;
      if (it->end < ns) continue;
      if (it->work.kind == UmCauseKind::Kernel) {
        if (kernels) return it->work;
        continue;
      }
      if (!running) running = it->work;
    }
    return running;
  }

  // How many pieces of GPU work, on any device, started at or before `ns`.
  int64_t started_by(int64_t ns) const {
    return std::upper_bound(starts_.begin(), starts_.end(), ns) - starts_.begin();
  }

 private:
  struct Window {
    int64_t start, end;
    UmCause work;
    int64_t latest_end;
    bool operator<(const Window& other) const {
      return std::tie(start, work.kind, work.row) <
             std::tie(other.start, other.work.kind, other.work.row);
    }
  };
  std::map<int64_t, std::vector<Window>> devices_;
  std::vector<int64_t> starts_;
};

struct Prefetch {
  int64_t issue_ns;
  int64_t id;
  int64_t address;
  int64_t bytes;
  int64_t target;  // residency
};

class Attributor {
 public:
  explicit Attributor(Database& db) : db_(db) {}

  UmTrace run() {
    read_events();
    // Most traces have no unified memory: then the GPU work need not be read.
    if (out_.events.empty()) return std::move(out_);
    read_gpu_work();
    read_prefetches();
    out_.causes.resize(out_.events.size());
    for (size_t i = 0; i < out_.events.size(); ++i) out_.causes[i] = cause_of(out_.events[i]);
    return std::move(out_);
  }

 private:
  void read_events() {
    Statement rows = db_.prepare(
        "SELECT id, counter_kind, coalesce(address, 0), coalesce(bytes, 0), coalesce(value, 0), "
        "alloc_id, src_device, dst_device, coalesce(start_ns, 0), end_ns, coalesce(cause, 0) "
        "FROM um_events ORDER BY start_ns, id");
    while (rows.step()) {
      UmEvent event;
      event.id = rows.int64(0);
      event.kind = static_cast<UmCounterKind>(rows.int64(1));
      event.address = rows.int64(2);
      event.bytes = rows.int64(3);
      event.value = rows.int64(4);
      event.alloc_id = rows.optional_int64(5);
      event.src = rows.optional_int64(6).value_or(kHostResidency);
      event.dst = rows.optional_int64(7).value_or(kHostResidency);
      event.start_ns = rows.int64(8);
      event.end_ns = std::max(event.start_ns, rows.optional_int64(9).value_or(event.start_ns));
      event.cause = rows.int64(10);
      out_.events.push_back(event);
    }
  }

  // Timed GPU work (prefetches have no GPU times: they are not work here).
  void read_gpu_work() {
    add_windows(UmCauseKind::Kernel,
                "SELECT id, device, NULL, gpu_start_ns, gpu_end_ns FROM kernels");
    add_windows(UmCauseKind::Copy,
                "SELECT id, src_device, dst_device, gpu_start_ns, gpu_end_ns FROM memcpys");
    add_windows(UmCauseKind::Memset,
                "SELECT id, device, NULL, gpu_start_ns, gpu_end_ns FROM memsets");
    windows_.finish();
  }

  // `select` gives (id, device, other device, start, end): a copy between
  // two devices runs on both.
  void add_windows(UmCauseKind kind, const std::string& select) {
    Statement rows =
        db_.prepare(select + " WHERE gpu_start_ns IS NOT NULL AND gpu_end_ns IS NOT NULL");
    while (rows.step()) {
      UmCause work{kind, rows.int64(0)};
      std::optional<int64_t> first = rows.optional_int64(1);
      std::optional<int64_t> second = rows.optional_int64(2);
      if (first) windows_.add(*first, rows.int64(3), rows.int64(4), work);
      if (second && second != first) windows_.add(*second, rows.int64(3), rows.int64(4), work);
    }
  }

  void read_prefetches() {
    Statement rows = db_.prepare(
        "SELECT id, coalesce(dst_alloc_id, src_alloc_id), coalesce(api_start_ns, 0), "
        "coalesce(dst_address, src_address, 0), bytes, dst_device FROM memcpys WHERE kind = ? "
        "AND coalesce(dst_alloc_id, src_alloc_id) IS NOT NULL");
    rows.bind(1, static_cast<int64_t>(CopyKind::Prefetch));
    while (rows.step()) {
      prefetches_[rows.int64(1)].push_back({rows.int64(2), rows.int64(0), rows.int64(3),
                                            rows.int64(4),
                                            rows.optional_int64(5).value_or(kHostResidency)});
    }
    for (auto& [alloc, list] : prefetches_) {
      std::sort(list.begin(), list.end(), [](const Prefetch& a, const Prefetch& b) {
        return std::tie(a.issue_ns, a.id) < std::tie(b.issue_ns, b.id);
      });
    }
  }

  std::optional<int64_t> prefetch_of(const UmEvent& event) const {
    if (!event.alloc_id) return std::nullopt;
    auto found = prefetches_.find(*event.alloc_id);
    if (found == prefetches_.end()) return std::nullopt;
    const std::vector<Prefetch>& list = found->second;
    auto after = std::upper_bound(list.begin(), list.end(), event.start_ns,
                                  [](int64_t t, const Prefetch& p) { return t < p.issue_ns; });
    for (auto it = after; it != list.begin();) {
      --it;
      bool covers = event.address >= it->address && event.address < saturating_add(it->address, it->bytes);
      if (it->target == event.dst && covers) return it->id;
    }
    return std::nullopt;
  }

  UmCause host_phase(const UmEvent& event) {
    // Migrations with as much GPU work started before them share a phase.
    int64_t work_before = windows_.started_by(event.start_ns);
    if (out_.host_phases.empty() || work_before != last_phase_key_) {
      out_.host_phases.push_back({event.id, event.start_ns, event.end_ns});
      last_phase_key_ = work_before;
    }
    HostPhase& phase = out_.host_phases.back();
    phase.end_ns = std::max(phase.end_ns, event.end_ns);
    return {UmCauseKind::HostPhase, static_cast<int64_t>(out_.host_phases.size() - 1)};
  }

  // Events arrive in time order, so host phases are numbered in time order.
  // A call that moves managed memory (cudaMemPrefetchAsync, a copy or memset
  // of it) gives its migrations the cause "user" (seen on the H100), never a
  // kernel's; kernel faults and the driver's own prefetching around them
  // give the other causes.
  UmCause cause_of(const UmEvent& event) {
    if (event.kind == UmCounterKind::GpuPageFault)
      return windows_.at(event.src, event.start_ns).value_or(UmCause{});
    if (!event.is_migration()) return {};
    int64_t device = event.kind == UmCounterKind::BytesDtoH ? event.src : event.dst;
    bool by_call = event.cause == static_cast<int64_t>(UmMigrationCause::User);
    if (std::optional<UmCause> work = windows_.at(device, event.start_ns, !by_call)) return *work;
    if (std::optional<int64_t> prefetch = prefetch_of(event))
      return {UmCauseKind::Prefetch, *prefetch};
    return host_phase(event);
  }

  Database& db_;
  UmTrace out_;
  GpuWindows windows_;
  std::unordered_map<int64_t, std::vector<Prefetch>> prefetches_;  // by allocation
  int64_t last_phase_key_ = -1;
};

}  // namespace

bool has_um_columns(Database& db) {
  return db.has_column("um_events", "cause") && db.has_column("um_events", "alloc_offset") &&
         db.has_column("mem_advice", "stream");
}

UmTrace read_um_trace(Database& db) {
  if (!has_um_columns(db)) return {};
  return Attributor(db).run();
}

}  // namespace apptracer
