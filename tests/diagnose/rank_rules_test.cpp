// collective_straggler on stragglers as the cross-rank analysis gives them
// (analyzer/ranks; its own tests build the merged job): what a finding says,
// what it costs and saves, and many at one site as one finding led by the
// costliest.
#include <gtest/gtest.h>

#include <algorithm>

#include "analyzer/diagnose/measured_transfer_cost.h"
#include "analyzer/diagnose/rules.h"
#include "trace_builder.h"

namespace apptracer::diagnose {
namespace {

ranks::Straggler late_rank(int64_t late_by_ns, int64_t cause_ns) {
  ranks::Straggler late;
  late.collective_id = 40;
  late.kind = CollectiveKind::AllGather;
  late.seq = 5;
  late.nranks = 2;
  late.late_rank = 1;
  late.late_by_ns = late.wait_ns = late_by_ns;
  late.step_range = "step";
  late.step = 5;
  late.held_by = "host gap";
  late.cause_ns = cause_ns;
  return late;
}

// The facts of a trace with no operations of its own: only the stragglers a
// test gives.
class StragglerFacts {
 public:
  StragglerFacts() { facts.operations = &trace_.operations(); }
  TraceFacts facts;

 private:
  testing::TraceBuilder builder_;
  trace::Trace trace_{builder_.db()};
};

std::vector<Finding> straggler_findings(const TraceFacts& facts) {
  MeasuredTransferCost cost(facts);
  std::vector<Finding> found;
  for (Finding& finding : diagnose(facts, cost)) {
    if (finding.rule == "collective_straggler") found.push_back(std::move(finding));
  }
  return found;
}

TEST(CollectiveStraggler, SaysWhoWasLateWhereAndWhatHeldIt) {
  StragglerFacts job;
  TraceFacts& facts = job.facts;
  facts.stragglers = {late_rank(20'000'000, 20'600'000), late_rank(400'000, 400'000)};
  std::vector<Finding> found = straggler_findings(facts);
  ASSERT_EQ(found.size(), 1u);  // 400 us late is a balanced job's jitter
  const Finding& finding = found[0];
  EXPECT_EQ(finding.what,
            "rank 1 arrived 20.00 ms late at AllGather (seq 5), step 5; held by host gap (20.60 ms); "
            "1 other ranks waited 20.00 ms");
  EXPECT_EQ(finding.cost_ns, 20'000'000);
  EXPECT_EQ(finding.saving_ns, 20'000'000);
  EXPECT_EQ(finding.nvtx, "step");
  ASSERT_EQ(finding.rows.size(), 1u);
  EXPECT_EQ(finding.rows[0].table, "collectives");
  EXPECT_EQ(finding.rows[0].row, 40);
  EXPECT_NE(finding.fix.find("host work"), std::string::npos) << finding.fix;
}

// A balanced job's 2 ms of jitter in every step, and one 20 ms straggler:
// one site (a host gap before the step's all-gather), led by the straggler.
TEST(CollectiveStraggler, ManyAtOneSiteAreOneFindingLedByTheCostliest) {
  StragglerFacts job;
  TraceFacts& facts = job.facts;
  for (int i = 0; i < 24; ++i) facts.stragglers.push_back(late_rank(2'000'000, 1'000'000));
  facts.stragglers.insert(facts.stragglers.begin() + 7, late_rank(20'000'000, 20'600'000));
  std::vector<Finding> found = straggler_findings(facts);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].occurrences, 25);
  EXPECT_EQ(found[0].what.rfind("rank 1 arrived 20.00 ms late", 0), 0u) << found[0].what;
  EXPECT_EQ(found[0].cost_ns, 24 * 2'000'000 + 20'000'000);
  EXPECT_EQ(found[0].saving_ns, 24 * 1'000'000 + 20'000'000);
}

}  // namespace
}  // namespace apptracer::diagnose
