#include "analyzer/diagnose/ranked_findings.h"

#include <algorithm>
#include <map>

#include "analyzer/diagnose/trace_facts.h"

namespace apptracer::diagnose {

namespace {

// What a finding is worth: a known saving, else what it costs now (at
// most what fixing it saves).
int64_t weight(const Finding& f) { return f.saving_ns.value_or(f.cost_ns); }

// Where a finding goes in the list: wrong results, time saved, memory
// saved, a saving the model cannot price, start-up, minor.
int tier(const Finding& f) {
  if (f.correctness) return 0;
  if (f.minor) return 5;
  if (f.startup) return 4;
  if (f.saving_ns) return 1;
  if (f.saving_bytes) return 2;
  return 3;
}

// A start-up finding of a rule other than `startup` (a data-flow waste over
// before the first steady step) saving under `share` of start-up's length is
// minor: paid once, and small beside what start-up costs anyway.
void mark_minor_in_startup(std::vector<Finding>& findings, double share) {
  int64_t startup_ns = 0;
  for (const Finding& f : findings) {
    if (f.rule == "startup") startup_ns = std::max(startup_ns, f.cost_ns);
  }
  if (startup_ns <= 0) return;
  double bound = share * static_cast<double>(startup_ns);
  for (Finding& f : findings) {
    if (!f.startup || f.rule == "startup" || f.correctness || f.saving_bytes || f.minor) continue;
    if (static_cast<double>(weight(f)) >= bound) continue;
    f.minor = true;
    f.estimate += std::string(f.estimate.empty() ? "" : "; ") + (f.saving_ns ? "saves" : "costs") + " under " +
                  format_ns(static_cast<int64_t>(bound)) + ", " + std::to_string(static_cast<int>(100 * share + 0.5)) +
                  "% of the " + format_ns(startup_ns) + " start-up: small beside it";
  }
}

void mark_minor(std::vector<Finding>& findings, const StepNoise& noise) {
  if (noise.step_ns <= 0) return;
  mark_minor_in_startup(findings, noise.share);
  auto share_text = [&](double share) {
    return format_ns(static_cast<int64_t>(share * static_cast<double>(noise.step_ns))) + " per step, " +
           std::to_string(static_cast<int>(100 * share + 0.5)) + "% of the " + format_ns(noise.step_ns) +
           " median step";
  };
  for (Finding& f : findings) {
    int64_t steps = f.steps > 0 ? f.steps : noise.run_steps;
    if (f.correctness || f.startup || f.saving_bytes || steps <= 0) continue;
    double per_step = static_cast<double>(weight(f) / steps);
    std::string why;
    if (per_step < noise.share * static_cast<double>(noise.step_ns)) {
      why = std::string(f.saving_ns ? "saves" : "costs") + " under " + share_text(noise.share) +
            ": less than steps vary";
    } else if (f.events > 0 && f.events * 4 < steps &&
               per_step < noise.one_off_share * static_cast<double>(noise.step_ns)) {
      why = "happened " + std::to_string(f.events) + " time(s) in " + std::to_string(steps) + " steps and " +
            (f.saving_ns ? "saves" : "costs") + " under " + share_text(noise.one_off_share) +
            ": a one-off, not a problem of the step";
    } else {
      continue;
    }
    f.minor = true;
    f.estimate += (f.estimate.empty() ? "" : "; ") + why;
  }
}

void mark_overlaps(std::vector<Finding>& findings) {
  std::map<std::pair<std::string, int64_t>, std::vector<size_t>> by_row;
  std::map<std::string, std::vector<size_t>> by_claim;
  for (size_t i = 0; i < findings.size(); ++i) {
    for (const Evidence& e : findings[i].rows) by_row[{e.table, e.row}].push_back(i);
    if (!findings[i].claim.empty()) by_claim[findings[i].claim].push_back(i);
  }
  auto mark = [&](const std::vector<size_t>& sharing) {
    for (size_t a : sharing) {
      for (size_t b : sharing) {
        std::vector<size_t>& list = findings[a].overlaps;
        // Findings of one rule are about different occurrences.
        if (findings[a].rule == findings[b].rule) continue;
        if (std::find(list.begin(), list.end(), b) == list.end()) list.push_back(b);
      }
    }
  };
  for (const auto& [row, sharing] : by_row) mark(sharing);
  for (const auto& [claim, sharing] : by_claim) mark(sharing);
  for (Finding& f : findings) std::sort(f.overlaps.begin(), f.overlaps.end());
}

}  // namespace

void rank_findings(std::vector<Finding>& findings, int64_t run_ns, const StepNoise& noise) {
  findings.erase(std::remove_if(findings.begin(), findings.end(),
                                [](const Finding& f) {
                                  return !f.correctness && f.saving_ns && *f.saving_ns <= 0;
                                }),
                 findings.end());
  for (Finding& f : findings) {
    // run_ns 0: no process's span is known, so there is nothing to bound by.
    if (!f.saving_ns || run_ns <= 0 || *f.saving_ns <= run_ns) continue;
    f.saving_ns = run_ns;
    f.estimate += "; bounded by how long the traced run lasted (" + format_ns(run_ns) + ")";
  }
  mark_minor(findings, noise);
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (tier(a) != tier(b)) return tier(a) < tier(b);
    if (weight(a) != weight(b)) return weight(a) > weight(b);
    if (a.cost_ns != b.cost_ns) return a.cost_ns > b.cost_ns;
    // Memory findings cost no time: the most bytes off a peak first.
    return a.saving_bytes.value_or(0) > b.saving_bytes.value_or(0);
  });
  mark_overlaps(findings);
}

}  // namespace apptracer::diagnose
