// Rules across ranks (a merged trace): a collective every rank waited on
// because one rank arrived late, and what on that rank held it
// (analyzer/ranks/stragglers.h).
#include <algorithm>
#include <string>

#include "analyzer/diagnose/rules.h"

namespace apptracer::diagnose {

namespace {

std::string held_by_text(const ranks::Straggler& late) {
  std::string text = late.held_by;
  if (!late.cause.empty()) text += " " + late.cause;
  return text + " (" + format_ns(late.cause_ns) + ")";
}

std::string fix_for(const ranks::Straggler& late) {
  if (late.held_by == "host gap") {
    return "move the host work before this collective off the step's critical path (or spread it "
           "evenly over the ranks)";
  }
  if (late.held_by == "synchronization") return "remove the synchronization before this collective";
  if (late.held_by == "host call") return "issue the collective before this host call, or make it asynchronous";
  return "balance the GPU work before this collective across the ranks";
}

}  // namespace

void collective_straggler(const RuleContext& context, std::vector<Finding>& findings) {
  // One finding per late arrival: diagnose groups them by site (the
  // costliest speaks for its group) and shows the top ones.
  for (const ranks::Straggler& late : context.facts.stragglers) {
    if (late.late_by_ns < std::max(ranks::kStragglerMinLateNs, context.limits.min_cost_ns)) continue;
    Finding finding;
    finding.rule = "collective_straggler";
    finding.what = "rank " + std::to_string(late.late_rank) + " arrived " +
                   format_ns(late.late_by_ns) + " late at " + std::string(to_string(late.kind)) +
                   (late.seq ? " (seq " + std::to_string(*late.seq) + ")" : "") +
                   (late.step ? ", " + late.step_range + " " + std::to_string(late.step) : "") +
                   "; held by " + held_by_text(late) + "; " + std::to_string(late.nranks - 1) +
                   " other ranks waited " + format_ns(late.wait_ns);
    finding.rows.push_back({"collectives", late.collective_id});
    if (!late.cause.empty()) finding.names.push_back(late.cause);
    finding.nvtx = late.step_range;
    finding.cost_ns = late.wait_ns;
    // Ended late_by earlier at most: when the late rank arrives with the one before it.
    finding.saving_ns = std::min(late.late_by_ns, late.cause_ns);
    finding.estimate = "the late rank arriving with the one before it: its lateness, at most what "
                       "held it";
    finding.fix = fix_for(late);
    findings.push_back(std::move(finding));
  }
}

}  // namespace apptracer::diagnose
