#include "analyzer/diagnose/ranked_findings.h"

#include <algorithm>
#include <map>

#include "analyzer/diagnose/trace_facts.h"

namespace apptracer::diagnose {

namespace {

// Rank within the list: a known saving, else what it costs now.
int64_t weight(const Finding& f) { return f.saving_ns.value_or(f.cost_ns); }

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

void rank_findings(std::vector<Finding>& findings, int64_t run_ns) {
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
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.correctness != b.correctness) return a.correctness;
    if (a.startup != b.startup) return b.startup;
    if (weight(a) != weight(b)) return weight(a) > weight(b);
    if (a.cost_ns != b.cost_ns) return a.cost_ns > b.cost_ns;
    // Memory findings cost no time: the most bytes off a peak first.
    return a.saving_bytes.value_or(0) > b.saving_bytes.value_or(0);
  });
  mark_overlaps(findings);
}

}  // namespace apptracer::diagnose
