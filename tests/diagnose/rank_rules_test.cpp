// collective_straggler on stragglers as the cross-rank analysis gives them
// (analyzer/ranks; its own tests build the merged job): what a finding says,
// what it costs and saves, and the costliest 20 reported one by one.
#include <gtest/gtest.h>

#include <algorithm>

#include "measured_transfer_cost.h"
#include "rules.h"

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

std::vector<Finding> straggler_findings(const TraceFacts& facts) {
  MeasuredTransferCost cost(facts);
  std::vector<Finding> found;
  for (Finding& finding : diagnose(facts, cost)) {
    if (finding.rule == "collective_straggler") found.push_back(std::move(finding));
  }
  return found;
}

TEST(CollectiveStraggler, SaysWhoWasLateWhereAndWhatHeldIt) {
  TraceFacts facts;
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

TEST(CollectiveStraggler, TheCostliestTwentyOneByOneThenTheRestTogether) {
  TraceFacts facts;
  for (int i = 0; i < 25; ++i) facts.stragglers.push_back(late_rank(2'000'000, 1'000'000));
  std::vector<Finding> found = straggler_findings(facts);
  ASSERT_EQ(found.size(), 21u);
  auto rest_at = std::find_if(found.begin(), found.end(), [](const Finding& finding) {
    return finding.what == "5 more collectives a rank arrived late at";
  });
  ASSERT_NE(rest_at, found.end());
  const Finding& rest = *rest_at;
  EXPECT_EQ(rest.cost_ns, 5 * 2'000'000);
  EXPECT_EQ(rest.saving_ns, 5 * 1'000'000);
}

}  // namespace
}  // namespace apptracer::diagnose
