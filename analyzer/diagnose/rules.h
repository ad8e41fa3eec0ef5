// The diagnoses `apptracer diagnose` runs: each rule reads the trace's facts
// (and the DVDG in them), estimates savings through a TransferCost, and adds
// findings. README.md lists them with the `nsys analyze` rules and Holistic
// Trace Analysis analyses each one covers.
#pragma once

#include <optional>
#include <vector>

#include "analyzer/diagnose/finding.h"
#include "analyzer/diagnose/trace_facts.h"
#include "analyzer/diagnose/transfer_cost.h"

namespace apptracer::diagnose {

// When something is worth a finding. Defaults are what `apptracer diagnose`
// uses; README.md documents them.
struct Thresholds {
  int64_t min_cost_ns = 10'000;           // smaller time costs are not reported
  // A finding about the steps saving (or, unknown, costing) less per step
  // than this share of the median step is minor: a step's time varies more
  // than that from one step to the next, so no measurement could confirm it.
  double min_step_share = 0.01;
  // ... and one that happened in fewer than a quarter of the steps, saving
  // less per step than this share of the median step: a one-off (a host
  // pause, a collector's run), not a problem of the step.
  double one_off_step_share = 0.1;
  int64_t small_copy_bytes = 64 << 10;    // a copy this small is latency-bound
  int64_t small_copy_count = 16;          // ... when this many go the same way
  int64_t min_gap_ns = 1'000'000;         // GPU idle gaps from this long
  int64_t min_blocked_ns = 100'000;       // host blocked in syncs, sync copies, memsets
                                          // (syncs: and saving min_cost_ns)
  int64_t copy_sync_ns = 50'000;          // a sync this soon after its thread's copy call waits for that copy
  int64_t churn_cycles = 4;               // allocate-free-allocate cycles of one size
  int64_t short_kernel_ns = 10'000;       // a kernel shorter than this is short (launch statistics)
  int64_t short_kernel_count = 100;       // launches a launch-bound step (or run) makes at least
  double min_graph_saving_share = 0.1;    // ... or, its kernels mostly short, what a graph saves of it
  // A kernel's launch as a CUDA graph node, where the link model has no
  // measurement of it (TransferCost::graph_launch): assumed.
  int64_t graph_node_ns = static_cast<int64_t>(model::kAssumedGraphNodeNs);
  int64_t utilization_chunks = 30;        // nsys gpu_time_util: the GPU span in 30 chunks
  double low_utilization = 0.5;           // ... flagged below 50% busy
  int64_t min_migrated_bytes = 1 << 20;   // on-demand unified-memory migration worth a finding,
  double min_migrated_fraction = 0.1;     // ... and this much of the allocation
  int64_t max_evidence_rows = 64;         // rows kept per finding (the count is in `what`)
  int64_t min_memory_bytes = 1 << 20;     // memory held for nothing worth a finding (at one site)
  int64_t min_memory_idle_ns = 1'000'000; // memory held unused this long before first or after last use
  int64_t min_cached_bytes = 1 << 20;     // an allocator's cache at the peak worth a finding,
  double min_cached_fraction = 0.05;      // ... and this much of the peak
  int64_t min_leak_bytes = 1 << 20;       // live memory growing step after step by this much in all
  double roomy_peak_share = 0.5;          // a GPU's peak under this share of its memory: bytes saved there are minor
};

struct RuleContext {
  const TraceFacts& facts;
  const TransferCost& cost;
  const Thresholds& limits;
  // The steady step measured without tracing, where the user gave it: the
  // traced step less it is what tracing added, all of it, which no
  // measurement of the machine prices (whatif/untraced_step.h says why).
  std::optional<int64_t> untraced_step_ns;
};

struct Rule {
  const char* name;
  const char* summary;  // one line: what it finds
  const char* covers;   // the nsys analyze rule / HTA analysis it stands for ("" if none)
  void (*run)(const RuleContext& context, std::vector<Finding>& findings);
  // Its conclusions need the whole run (what was written before or read
  // after): it does not run on facts limited to some steps.
  bool whole_run = false;
};

// Every rule, in the order findings of equal saving are listed.
const std::vector<Rule>& all_rules();

// Runs every rule that applies to the facts (on facts limited to steps, not
// those needing the whole run); findings grouped by site and ranked
// (site_groups.h, ranked_findings.h).
std::vector<Finding> diagnose(const TraceFacts& facts, const TransferCost& cost,
                              const Thresholds& limits = {});

// Which rules run_rules runs.
enum class RuleSet { Applicable, WholeRunOnly, StepsOnly };
// Runs the rules of `set` without grouping or ranking them; the findings of
// facts covering steps carry their number.
void run_rules(const TraceFacts& facts, const TransferCost& cost, const Thresholds& limits,
               RuleSet set, std::vector<Finding>& findings,
               std::optional<int64_t> untraced_step_ns = std::nullopt);
// Groups findings by site and ranks them; savings bounded by `run_ns`;
// findings about the steps minor against `step_ns`, the median step (0: no
// steps), and those about the whole run against it over its `run_steps`.
std::vector<Finding> finish_findings(std::vector<Finding> findings, const Thresholds& limits,
                                     int64_t run_ns, int64_t step_ns = 0, int64_t run_steps = 0);

// What the rules looked at and could not look at, one line each (e.g.
// unified-memory migrations the trace did not record). `whole_run_rules_ran`:
// the rules needing the whole run ran on it, the others on the facts' steps.
std::vector<std::string> diagnosis_notes(const TraceFacts& facts, bool whole_run_rules_ran = false);

// The rules, by family (one file each).
void pageable_copy(const RuleContext& context, std::vector<Finding>& findings);
void small_copies(const RuleContext& context, std::vector<Finding>& findings);
void sync_copy(const RuleContext& context, std::vector<Finding>& findings);
void sync_memset(const RuleContext& context, std::vector<Finding>& findings);
void numa_far_host_buffer(const RuleContext& context, std::vector<Finding>& findings);
void redundant_copy(const RuleContext& context, std::vector<Finding>& findings);
void no_copy_compute_overlap(const RuleContext& context, std::vector<Finding>& findings);
void uninitialized_read(const RuleContext& context, std::vector<Finding>& findings);
void written_never_read(const RuleContext& context, std::vector<Finding>& findings);
void allocation_never_used(const RuleContext& context, std::vector<Finding>& findings);
void sync_api(const RuleContext& context, std::vector<Finding>& findings);
void gpu_idle_gap(const RuleContext& context, std::vector<Finding>& findings);
void gpu_low_utilization(const RuleContext& context, std::vector<Finding>& findings);
void allocation_churn(const RuleContext& context, std::vector<Finding>& findings);
void launch_bound_kernels(const RuleContext& context, std::vector<Finding>& findings);
void startup(const RuleContext& context, std::vector<Finding>& findings);
void xla_compile(const RuleContext& context, std::vector<Finding>& findings);
// Findings about a framework's compiler's own work (while_compiling), folded
// into the xla_compile finding, else into start-up's; kept where neither is.
std::vector<Finding> fold_compiler_work(std::vector<Finding> findings);
void um_on_demand_migration(const RuleContext& context, std::vector<Finding>& findings);
void um_thrashing(const RuleContext& context, std::vector<Finding>& findings);
void collective_straggler(const RuleContext& context, std::vector<Finding>& findings);
void memory_never_used(const RuleContext& context, std::vector<Finding>& findings);
void memory_allocated_early(const RuleContext& context, std::vector<Finding>& findings);
void memory_freed_late(const RuleContext& context, std::vector<Finding>& findings);
void memory_cached_at_peak(const RuleContext& context, std::vector<Finding>& findings);
void memory_leak(const RuleContext& context, std::vector<Finding>& findings);

// Shared by the rules: a finding located at a transfer or kernel (NVTX range,
// host call and framework module and op of its issue), with its rows added once each, up to the
// evidence limit.
void locate(const RuleContext& context, Finding& finding, std::optional<int64_t> correlation,
            int64_t issue_ns);
void add_row(const RuleContext& context, Finding& finding, const char* table, int64_t row);
// Adds `name` to the finding's names unless it is there (at most 8 kept).
void add_name(Finding& finding, std::string_view name);
// How long a copy held the program: its GPU time or, where longer, its call
// (a synchronous copy, or one staged from pageable memory, blocks the host
// until it is done), less the call's wait for work queued before the copy,
// which the program waits for anyway. `busy`: its device's busy intervals.
int64_t held_ns(const TraceFacts& facts, const Intervals& busy, const Transfer& copy);
// saving = now - predicted, or unknown with the model's reason.
void set_saving(Finding& finding, int64_t now_ns, std::optional<double> predicted_ns,
                const std::string& estimate);

}  // namespace apptracer::diagnose
