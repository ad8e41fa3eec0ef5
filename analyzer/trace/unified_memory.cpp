#include "analyzer/trace/unified_memory.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analyzer/trace/trace.h"
#include "apptracer/saturating.h"

namespace apptracer::trace {

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
  explicit Attributor(Trace& trace) : trace_(trace) {}

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
    for (const Packed<UmEventRow>& row : trace_.rows<UmEventRow>()) {
      UmEvent event;
      event.id = row.id;
      event.kind = row.counter_kind;
      event.address = row.address.value_or(0);
      event.bytes = row.bytes.value_or(0);
      event.value = row.value.value_or(0);
      event.alloc_id = row.alloc_id;
      event.src = row.src_device.value_or(kHostResidency);
      event.dst = row.dst_device.value_or(kHostResidency);
      event.start_ns = row.start_ns.value_or(0);
      event.end_ns = std::max(event.start_ns, row.end_ns.value_or(event.start_ns));
      event.cause = row.cause.value_or(0);
      out_.events.push_back(event);
    }
    std::stable_sort(out_.events.begin(), out_.events.end(), [](const UmEvent& a, const UmEvent& b) {
      return a.start_ns < b.start_ns;
    });
  }

  // Timed GPU work (prefetches have no GPU times: they are not work here). A
  // copy between two devices runs on both.
  void read_gpu_work() {
    auto add = [&](UmCauseKind kind, int64_t id, NullableInt device, NullableInt other_device,
                   NullableInt start, NullableInt end) {
      if (!start || !end) return;
      UmCause work{kind, id};
      if (device) windows_.add(*device, *start, *end, work);
      if (other_device && other_device != device) windows_.add(*other_device, *start, *end, work);
    };
    for (const Packed<KernelRow>& k : trace_.rows<KernelRow>())
      add(UmCauseKind::Kernel, k.id, k.device, {}, k.gpu_start_ns, k.gpu_end_ns);
    for (const Packed<MemcpyRow>& c : trace_.rows<MemcpyRow>())
      add(UmCauseKind::Copy, c.id, c.src_device, c.dst_device, c.gpu_start_ns, c.gpu_end_ns);
    for (const Packed<MemsetRow>& m : trace_.rows<MemsetRow>())
      add(UmCauseKind::Memset, m.id, m.device, {}, m.gpu_start_ns, m.gpu_end_ns);
    windows_.finish();
  }

  void read_prefetches() {
    for (const Packed<MemcpyRow>& copy : trace_.rows<MemcpyRow>()) {
      NullableInt alloc = copy.dst_alloc_id ? copy.dst_alloc_id : copy.src_alloc_id;
      if (copy.kind != CopyKind::Prefetch || !alloc) continue;
      NullableInt address = copy.dst_address ? copy.dst_address : copy.src_address;
      prefetches_[*alloc].push_back({copy.api_start_ns.value_or(0), copy.id, address.value_or(0),
                                     copy.bytes, copy.dst_device.value_or(kHostResidency)});
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

  Trace& trace_;
  UmTrace out_;
  GpuWindows windows_;
  std::unordered_map<int64_t, std::vector<Prefetch>> prefetches_;  // by allocation
  int64_t last_phase_key_ = -1;
};

}  // namespace

bool has_um_columns(Trace& trace) {
  Database& db = trace.db();
  return db.has_column("um_events", "cause") && db.has_column("um_events", "alloc_offset") &&
         db.has_column("mem_advice", "stream");
}

UmTrace read_um_trace(Trace& trace) {
  if (!has_um_columns(trace)) return {};
  return Attributor(trace).run();
}

}  // namespace apptracer::trace
