// Unified memory: data moved by page faults (with the prefetch that moves it
// ahead instead) and data moving back and forth (with the advice that stops
// it). Migrations are attributed as the DVDG and `stats --report um` do
// (um_attribution.h).
#include <map>
#include <set>
#include <tuple>

#include "analyzer/dvdg/labels.h"
#include "analyzer/diagnose/rules.h"

namespace apptracer::diagnose {

namespace {

bool on_demand(const trace::UmEvent& event, const trace::UmCause& cause) {
  return event.is_migration() && event.alloc_id &&
         static_cast<UmMigrationCause>(event.cause) != UmMigrationCause::User &&
         (cause.kind == trace::UmCauseKind::Kernel || cause.kind == trace::UmCauseKind::HostPhase);
}

// The path a prefetch of these bytes would take: the managed path where the
// model knows one, else a pinned copy the same way (a prefetch is a DMA).
std::pair<std::optional<double>, std::string> prefetch_time(const RuleContext& context,
                                                            bool to_device, int64_t device,
                                                            int64_t bytes) {
  TransferPath path;
  path.kind = to_device ? CopyKind::HtoD : CopyKind::DtoH;
  path.host_memory = MemoryKind::Managed;
  path.device = device;
  if (std::optional<double> t = context.cost.time_ns(path, bytes))
    return {t, "prefetch: " + context.cost.describe(path)};
  path.host_memory = MemoryKind::Pinned;
  std::optional<double> t = context.cost.time_ns(path, bytes);
  return {t, "prefetch at pinned-copy speed: " + context.cost.describe(path)};
}

// The time migrations held the program: their transfers and the faults
// serviced between them, which the records do not time. A kernel faulting
// data in waits from its start; the CPU pulling an allocation back waits
// from its first migration of it in that host phase. A prefetch ahead
// removes both.
class Stalls {
 public:
  explicit Stalls(const TraceFacts& facts) : facts_(facts) {}

  void add(const trace::UmEvent& event, const trace::UmCause& cause, Intervals& time) {
    int64_t start = event.start_ns, end = std::max(event.start_ns, event.end_ns);
    if (cause.kind == trace::UmCauseKind::Kernel) {
      const Kernel* k = facts_.ops().kernel(cause.row);
      if (k && k->timed()) start = std::min(start, *k->row->gpu_start_ns);
    } else if (cause.kind == trace::UmCauseKind::HostPhase && event.alloc_id) {
      start = phase_starts_.try_emplace({*event.alloc_id, cause.row}, start).first->second;
    }
    time.emplace_back(start, end);
  }

 private:
  const TraceFacts& facts_;
  // (allocation, host phase) -> its first migration's start (events come in time order)
  std::map<std::pair<int64_t, int64_t>, int64_t> phase_starts_;
};

// Whether any kernel wrote the allocation (else read-mostly advice fits).
bool kernels_write(const TraceFacts& facts, int64_t alloc_id) {
  const dvdg::Graph& graph = facts.graph;
  for (const dvdg::Value& value : graph.values) {
    if (value.version == 0 || value.producer_op == dvdg::Value::kNoOp) continue;
    if (graph.locations[value.location].alloc_id != alloc_id) continue;
    if (graph.ops[value.producer_op].kind == dvdg::OpKind::Kernel) return true;
  }
  return false;
}

}  // namespace

void um_on_demand_migration(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  struct Group {
    Finding finding;
    int64_t records = 0, bytes = 0;
    Intervals time;
  };
  // By (allocation, from, to, caused by kernels rather than the host).
  std::map<std::tuple<int64_t, int64_t, int64_t, bool>, Group> groups;
  Stalls stalls(facts);
  for (size_t i = 0; i < facts.um.events.size(); ++i) {
    const trace::UmEvent& event = facts.um.events[i];
    const trace::UmCause& cause = facts.um.causes[i];
    if (!on_demand(event, cause)) continue;
    bool by_kernel = cause.kind == trace::UmCauseKind::Kernel;
    Group& group = groups[{*event.alloc_id, event.src, event.dst, by_kernel}];
    if (group.records++ == 0) {
      if (by_kernel) {
        if (const Kernel* k = facts.ops().kernel(cause.row))
          locate(context, group.finding, k->row->call_correlation_id, event.start_ns);
      } else {
        group.finding.nvtx = facts.ops().nvtx_at(std::nullopt, event.start_ns);
      }
    }
    group.bytes = saturating_add(group.bytes, event.bytes);
    stalls.add(event, cause, group.time);
    add_row(context, group.finding, "um_events", event.id);
    if (by_kernel) {
      if (const Kernel* k = facts.ops().kernel(cause.row)) {
        add_name(group.finding, k->name);
        add_row(context, group.finding, "kernels", k->row->id);
      }
    }
  }
  for (auto& [key, group] : groups) {
    auto [alloc_id, from, to, by_kernel] = key;
    const Allocation* allocation = facts.ops().allocation(alloc_id);
    double share = allocation ? context.limits.min_migrated_fraction * allocation->bytes() : 0.0;
    if (group.bytes < context.limits.min_migrated_bytes || group.bytes < share) continue;
    merge_intervals(group.time);
    int64_t now = covered_ns(group.time, INT64_MIN, INT64_MAX);
    bool to_device = to != trace::kHostResidency;
    int64_t device = to_device ? to : from;
    Finding& f = group.finding;
    std::string name = allocation_name(facts, alloc_id);
    f.rule = "um_on_demand_migration";
    f.claim = "migrations of " + name;
    f.what = dvdg::format_bytes(group.bytes) + " of managed " + name + " migrated " +
             dvdg::residency_name(from) + " -> " + dvdg::residency_name(to) + " on demand (" +
             std::to_string(group.records) + " migration records), " +
             (by_kernel ? "faulted in by the kernels that touched it"
                        : "pulled back by the CPU touching it");
    f.cost_ns = now;
    auto [predicted, estimate] = prefetch_time(context, to_device, device, group.bytes);
    set_saving(f, now, predicted, estimate);
    f.fix = to_device ? "cudaMemPrefetchAsync(ptr, " + dvdg::format_bytes(group.bytes) +
                            ", device " + std::to_string(device) +
                            ", stream) before the first kernel that uses it"
                      : "cudaMemPrefetchAsync(ptr, " + dvdg::format_bytes(group.bytes) +
                            ", cudaCpuDeviceId, stream) before the CPU reads it, or "
                            "cudaMemAdvise(ptr, size, cudaMemAdviseSetAccessedBy, "
                            "cudaCpuDeviceId) to read it in place";
    findings.push_back(std::move(f));
  }
}

void um_thrashing(const RuleContext& context, std::vector<Finding>& findings) {
  const TraceFacts& facts = context.facts;
  struct PerAllocation {
    Finding finding;
    int64_t thrashing = 0, turns = 0, bytes = 0, device = 0;
    std::optional<bool> last_to_device;
    Intervals time;
    Intervals first_move;  // the migrations before the first turn
  };
  std::map<int64_t, PerAllocation> allocations;
  Stalls stalls(facts);
  for (size_t i = 0; i < facts.um.events.size(); ++i) {
    const trace::UmEvent& event = facts.um.events[i];
    if (!event.alloc_id) continue;
    bool thrash = event.kind == UmCounterKind::Thrashing;
    if (!thrash && !on_demand(event, facts.um.causes[i])) continue;
    PerAllocation& a = allocations[*event.alloc_id];
    if (a.time.empty() && a.thrashing == 0) a.finding.nvtx = facts.ops().nvtx_at(std::nullopt, event.start_ns);
    add_row(context, a.finding, "um_events", event.id);
    if (thrash) {
      ++a.thrashing;
      continue;
    }
    bool to_device = event.dst != trace::kHostResidency;
    if (a.last_to_device && *a.last_to_device != to_device) ++a.turns;
    a.last_to_device = to_device;
    if (to_device) a.device = event.dst;
    a.bytes = saturating_add(a.bytes, event.bytes);
    stalls.add(event, facts.um.causes[i], a.time);
    if (a.turns == 0) a.first_move.push_back(a.time.back());
  }
  for (auto& [alloc_id, a] : allocations) {
    // Host -> device -> host -> device: the data keeps moving.
    if (a.thrashing == 0 && a.turns < 2) continue;
    merge_intervals(a.time);
    int64_t now = covered_ns(a.time, INT64_MIN, INT64_MAX);
    merge_intervals(a.first_move);
    Finding& f = a.finding;
    std::string name = allocation_name(facts, alloc_id);
    f.rule = "um_thrashing";
    f.claim = "migrations of " + name;
    f.what = "managed " + name + " moved back and forth " + std::to_string(a.turns + 1) +
             " times (" + dvdg::format_bytes(a.bytes) + " migrated" +
             (a.thrashing ? ", " + std::to_string(a.thrashing) + " thrashing reports" : "") + ")";
    f.cost_ns = now;
    // The advice moves nothing ahead: the data's first move, as it happened
    // here, stays; every move back and forth after it goes.
    set_saving(f, now, static_cast<double>(covered_ns(a.first_move, INT64_MIN, INT64_MAX)),
               "all but the allocation's first move (advice does not move data ahead), at the "
               "time it took here");
    f.fix = kernels_write(facts, alloc_id)
                ? "cudaMemAdvise(ptr, size, cudaMemAdviseSetPreferredLocation, device " +
                      std::to_string(a.device) +
                      ") and cudaMemAdvise(ptr, size, cudaMemAdviseSetAccessedBy, "
                      "cudaCpuDeviceId): it stays on the GPU and the CPU reads it in place"
                : "cudaMemAdvise(ptr, size, cudaMemAdviseSetReadMostly, " +
                      std::to_string(a.device) +
                      "): the GPUs only read it, so each side keeps a copy";
    findings.push_back(std::move(f));
  }
}

}  // namespace apptracer::diagnose
