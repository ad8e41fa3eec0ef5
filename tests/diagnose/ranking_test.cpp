// What a user reads first: one finding per site however often it repeats,
// no finding that saves nothing, no saving larger than the run, unknown
// savings after priced ones, by cost, findings saving less per step than
// steps vary last, overlapping findings marked, the top 10 shown.
#include <sstream>

#include "diagnose_fixture.h"
#include "analyzer/diagnose/findings_output.h"
#include "analyzer/diagnose/ranked_findings.h"
#include "analyzer/diagnose/site_groups.h"
#include "analyzer/diagnose/system_file_cost.h"

namespace apptracer::diagnose {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kMs = 1'000'000;

Finding priced(const std::string& rule, std::optional<int64_t> saving, int64_t cost) {
  Finding f;
  f.rule = rule;
  f.what = rule;
  f.saving_ns = saving;
  f.cost_ns = cost;
  return f;
}

std::vector<std::string> rules_of(const std::vector<Finding>& findings) {
  std::vector<std::string> rules;
  for (const Finding& f : findings) rules.push_back(f.rule);
  return rules;
}

class Ranking : public DiagnoseTest {};

// A training loop: each step copies a new pageable tensor (another host
// address each time) inside NVTX range "step N". 2,000 steps, one site.
TEST_F(Ranking, AFloodOfSimilarFindingsComesOutAsOneFindingPerSite) {
  int64_t device = buffer(AllocKind::Device, kMiB);
  for (int64_t step = 0; step < 2000; ++step) {
    testing::NvtxRangeRow range;
    range.name = "step " + std::to_string(step);
    range.start_ns = step * kMs;
    range.end_ns = step * kMs + 900'000;
    trace.add(range);
    int64_t id = copy(CopyKind::HtoD, device, device, kMiB, step * kMs + 1000, 100'000,
                      MemoryKind::Pageable);
    Statement host = trace.db().prepare(
        "UPDATE memcpys SET src_alloc_id = NULL, src_address = ? WHERE id = ?");
    host.bind(1, 0x100000000 + step * 2 * kMiB).bind(2, id).run();
  }
  std::vector<Finding> all = all_findings();
  EXPECT_LE(all.size(), 3u) << ::testing::PrintToString(rules_of(all));
  auto pageable = findings("pageable_copy");
  ASSERT_EQ(pageable.size(), 1u);
  EXPECT_EQ(pageable[0].occurrences, 2000);
  EXPECT_EQ(pageable[0].cost_ns, 2000 * 100'000);
  EXPECT_EQ(pageable[0].rows.size(), 64u);  // the evidence limit, not 2,000 rows
  EXPECT_NE(pageable[0].what.find("2000 times at this site in all"), std::string::npos)
      << pageable[0].what;
  EXPECT_NE(pageable[0].what.find("from NVTX range step 0 to step 1999"), std::string::npos)
      << pageable[0].what;
}

// One site, two problems: data copied back where it came from, and data
// uploaded again. Different fixes keep them apart; the same fix at another
// buffer or step joins its group.
TEST(SiteGroups, FindingsAskingForDifferentFixesStayApart) {
  Finding back = priced("redundant_copy", kMs, kMs);
  back.fix = "keep using the data in alloc #3 device (device 0) instead of copying it back from alloc #1";
  Finding again = priced("redundant_copy", kMs, kMs);
  again.fix = "copy once and reuse alloc #3 device (device 0): nothing wrote it since the data arrived";
  Finding again_later = again;
  again_later.fix = "copy once and reuse alloc #7 device (device 0): nothing wrote it since the data arrived";
  std::vector<Finding> groups = group_by_site({back, again, again_later}, 100);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].occurrences, 1);
  EXPECT_EQ(groups[1].occurrences, 2);
}

// The same waste at one site in start-up and in the steady steps: two
// problems, the one paid once and the one every step repeats.
TEST(SiteGroups, StartUpsOccurrenceOfASiteStaysApartFromTheSteadySteps) {
  Finding startup = priced("written_never_read", 5 * kMs, 5 * kMs);
  startup.startup = true;
  Finding steady = priced("written_never_read", kMs, kMs);
  std::vector<Finding> groups = group_by_site({startup, steady, steady, steady}, 100);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_TRUE(groups[0].startup);
  EXPECT_EQ(groups[0].occurrences, 1);
  EXPECT_FALSE(groups[1].startup);
  EXPECT_EQ(groups[1].occurrences, 3);
  EXPECT_EQ(groups[1].cost_ns, 3 * kMs);
}

TEST(RankFindings, AFindingThatSavesNothingIsNotShown) {
  Finding wrong = priced("uninitialized_read", std::nullopt, 0);
  wrong.correctness = true;
  std::vector<Finding> findings{priced("sync_api", 0, 5 * kMs), priced("gpu_idle_gap", 2 * kMs, 3 * kMs),
                                priced("pageable_copy", std::nullopt, kMs), wrong};
  rank_findings(findings, 1000 * kMs);
  EXPECT_EQ(rules_of(findings),
            (std::vector<std::string>{"uninitialized_read", "gpu_idle_gap", "pageable_copy"}));
}

// Findings the model cannot price (a kernel's writes nothing reads, copies
// on a path no model knows) come after every priced one, by what they cost
// now, so that they never push a saving out of the first 10; a memory
// finding's bytes are a price.
TEST(RankFindings, UnknownSavingsComeAfterPricedOnesByTheirCost) {
  std::vector<Finding> findings;
  findings.push_back(priced("written_never_read", std::nullopt, 0));
  findings.push_back(priced("pageable_copy", std::nullopt, 198 * kMs));
  for (int i = 0; i < 9; ++i) findings.push_back(priced("gpu_idle_gap", kMs, kMs));
  findings.push_back(priced("sync_copy", 3 * kMs, 4 * kMs));
  Finding memory = priced("memory_cached_at_peak", std::nullopt, 0);
  memory.saving_bytes = 200 * kMiB;
  findings.push_back(memory);
  rank_findings(findings, 1000 * kMs);
  ASSERT_EQ(findings.size(), 13u);
  EXPECT_EQ(findings[0].rule, "sync_copy");
  EXPECT_EQ(findings[9].rule, "gpu_idle_gap");
  EXPECT_EQ(findings[10].rule, "memory_cached_at_peak");
  EXPECT_EQ(findings[11].rule, "pageable_copy");
  EXPECT_EQ(findings[12].rule, "written_never_read");
  EXPECT_EQ(shown_by_default(findings), 10u);
}

// On a launch-bound training step of 8.06 ms, 59 small copies cost 931 ns
// per step: under 1% of the step, less than a step's time varies (3% on
// that trace). Minor: after start-up, and not shown by default; a finding
// saving 156 us per step is not. Memory and correctness are never minor,
// nor findings about the whole run where the run's steps are not given.
TEST(RankFindings, AFindingSavingLessPerStepThanStepsVaryIsMinor) {
  Finding copies = priced("small_copies", std::nullopt, 55'000);
  copies.steps = 59;
  Finding gap = priced("gpu_idle_gap", 9'230'000, 10'880'000);
  gap.steps = 59;
  Finding startup = priced("startup", std::nullopt, 10'000 * kMs);
  startup.startup = true;
  Finding whole_run = priced("written_never_read", 20'000, 20'000);
  Finding wrong = priced("uninitialized_read", std::nullopt, 0);
  wrong.correctness = true;
  std::vector<Finding> findings{copies, startup, gap, whole_run, wrong};
  rank_findings(findings, 20'000 * kMs, {8'060'000, 0.01});
  EXPECT_EQ(rules_of(findings), (std::vector<std::string>{"uninitialized_read", "gpu_idle_gap",
                                                          "written_never_read", "startup", "small_copies"}));
  EXPECT_TRUE(findings.back().minor);
  EXPECT_NE(findings.back().estimate.find("costs under 80.6 us per step, 1% of the 8.06 ms median step"),
            std::string::npos)
      << findings.back().estimate;
  for (size_t i = 0; i + 1 < findings.size(); ++i) EXPECT_FALSE(findings[i].minor) << findings[i].rule;
  EXPECT_EQ(shown_by_default(findings), 4u);
  std::ostringstream text;
  write_findings_text(text, findings, shown_by_default(findings));
  EXPECT_EQ(text.str().find("[small_copies]"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("1 more finding(s) with smaller savings left out (1 minor: saving less per "
                            "step than steps vary, one-offs, or memory a GPU with room to spare does "
                            "not need): --all shows every finding"),
            std::string::npos)
      << text.str();
}

// The data-flow rules look at the whole run: their findings hold no steps
// of their own, and are minor against the steps the run held (a Lightning
// fit's 4-byte copy of its loss, written and never read, 39 times in 40
// steps of 4.06 ms: 19 us a step). One saving a tenth of the run's steps'
// time each is not.
TEST(RankFindings, AWholeRunFindingIsMinorAgainstTheStepsTheRunHeld) {
  Finding small = priced("written_never_read", 761'903, 761'903);
  small.events = 39;
  Finding large = priced("redundant_copy", 40 * 406'000, 40 * 406'000);
  std::vector<Finding> findings{small, large};
  rank_findings(findings, 20'000 * kMs, {4'060'000, 0.01, 0.1, 40});
  EXPECT_EQ(rules_of(findings), (std::vector<std::string>{"redundant_copy", "written_never_read"}));
  EXPECT_FALSE(findings[0].minor);
  EXPECT_TRUE(findings[1].minor);
  EXPECT_NE(findings[1].estimate.find("saves under 40.6 us per step, 1% of the 4.06 ms median step"),
            std::string::npos)
      << findings[1].estimate;
}

// A data-flow finding over before the first steady step is start-up's
// (listed with it); one saving under 1% of start-up's length is minor (a
// Lightning fit's 38 us copy written and never read in its 15.1 s start-up),
// one saving more is not, and neither is `startup` itself.
TEST(RankFindings, AStartUpFindingSmallBesideStartUpIsMinor) {
  Finding startup = priced("startup", std::nullopt, 15'112 * kMs);
  startup.startup = true;
  Finding small = priced("written_never_read", 37'925, 37'925);
  small.startup = true;
  Finding large = priced("redundant_copy", 400 * kMs, 400 * kMs);
  large.startup = true;
  Finding step = priced("launch_bound_kernels", 40 * 1'900'000, 40 * 1'940'000);
  step.steps = 40;
  std::vector<Finding> findings{small, startup, large, step};
  rank_findings(findings, 20'000 * kMs, {5'310'000, 0.01, 0.1, 40});
  EXPECT_EQ(rules_of(findings),
            (std::vector<std::string>{"launch_bound_kernels", "startup", "redundant_copy", "written_never_read"}));
  for (size_t i = 0; i < 3; ++i) EXPECT_FALSE(findings[i].minor) << findings[i].rule;
  EXPECT_TRUE(findings[3].minor);
  EXPECT_NE(findings[3].estimate.find("saves under 151.12 ms, 1% of the 15.11 s start-up: small beside it"),
            std::string::npos)
      << findings[3].estimate;
}

// A flax training run's single 1.06 ms idle gap in 40 steps of 548 us: 25
// us a step, 4.6% of it, more than steps vary but in one step only. Minor,
// after the launch-bound step it ranked above; a synchronization in every
// step, copies in a few steps saving a tenth of a step or more, or a finding
// whose rule does not count its events (copies made again), are not.
TEST(RankFindings, AOneOffSavingLittleAStepIsMinor) {
  Finding one_off = priced("gpu_idle_gap", 1'004'479, 1'062'776);
  one_off.steps = 40;
  one_off.events = 1;
  Finding launch_bound = priced("launch_bound_kernels", std::nullopt, 20'234'185);
  launch_bound.steps = 40;
  Finding every_step = priced("sync_api", 40 * 30'000, 40 * 40'000);
  every_step.steps = 40;
  every_step.events = 40;
  Finding rare_but_large = priced("pageable_copy", 9 * 3 * kMs, 9 * 4 * kMs);
  rare_but_large.steps = 40;
  rare_but_large.events = 9;
  Finding uncounted = priced("redundant_copy", 1'000'000, 1'100'000);
  uncounted.steps = 40;
  std::vector<Finding> findings{one_off, launch_bound, every_step, rare_but_large, uncounted};
  rank_findings(findings, 20'000 * kMs, {548'000, 0.01, 0.1});
  EXPECT_EQ(rules_of(findings), (std::vector<std::string>{"pageable_copy", "sync_api", "redundant_copy",
                                                          "launch_bound_kernels", "gpu_idle_gap"}))
      << ::testing::PrintToString(rules_of(findings));
  ASSERT_EQ(findings[4].rule, "gpu_idle_gap");
  EXPECT_TRUE(findings[4].minor);
  EXPECT_NE(findings[4].estimate.find("happened 1 time(s) in 40 steps and saves under 54.8 us per step, 10% of "
                                      "the 548.0 us median step: a one-off"),
            std::string::npos)
      << findings[4].estimate;
  for (size_t i = 0; i < 4; ++i) EXPECT_FALSE(findings[i].minor) << findings[i].rule;
}

TEST(RankFindings, NoSavingExceedsTheRun) {
  std::vector<Finding> findings{priced("sync_api", 358'710 * kMs, 424'000)};
  rank_findings(findings, 2 * kMs);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].saving_ns, 2 * kMs);
  EXPECT_NE(findings[0].estimate.find("bounded by how long the traced run lasted (2.00 ms)"),
            std::string::npos)
      << findings[0].estimate;
}

// `apptracer merge` of two runs made 400 s apart on one GPU: the first run
// ends in a synchronization, and the next work on the device is the second
// run's. That wait is not the first run's to save, and no saving is longer
// than the two runs together.
TEST_F(Ranking, TheBoundHoldsOnAMergedTraceOfTwoRuns) {
  int64_t d = buffer(AllocKind::Device, 4096);
  for (int64_t run = 0; run < 2; ++run) {
    int64_t at = run * 400'000 * kMs;
    kernel("work", at + 10'000, kMs, {{d, AccessKind::Write}});
    testing::SyncRow sync;
    sync.start_ns = at + 20'000;
    sync.end_ns = at + kMs + 20'000;
    sync.call_correlation_id = call("cudaDeviceSynchronize", sync.start_ns, sync.end_ns);
    trace.add(sync);
  }
  Database& db = trace.db();
  for (const TableInfo* table : tables_with_role(TableRole::Merge)) db.exec(create_table_sql(*table));
  db.exec(
      "INSERT INTO processes(process_id, pid, command_line, status) VALUES "
      "(1, 10, './train', 'complete'), (2, 11, './train', 'complete')");
  for (const char* table : {"kernels", "syncs", "api_calls", "allocations"}) {
    db.exec(std::string("ALTER TABLE ") + table + " ADD COLUMN process_id INTEGER DEFAULT 1");
  }
  db.exec("UPDATE kernels SET process_id = 2 WHERE gpu_start_ns > 1000000000;"
          "UPDATE syncs SET process_id = 2 WHERE start_ns > 1000000000;"
          "UPDATE api_calls SET process_id = 2 WHERE start_ns > 1000000000");
  std::vector<Finding> all = all_findings();
  for (const Finding& f : all) {
    EXPECT_LE(f.saving_ns.value_or(0), 3 * kMs) << f.rule << ": " << f.what;
  }
  EXPECT_TRUE(findings("sync_api").empty());
}

// um_thrashing and um_on_demand_migration price the same migrations: each
// names the other, and the text says not to add them.
TEST_F(Ranking, FindingsOverTheSameMigrationsOverlap) {
  int64_t managed = buffer(AllocKind::Managed, 8 * kMiB);
  kernel("reader", 1 * kMs, 1 * kMs, {{managed, AccessKind::Read}});
  kernel("reader", 4 * kMs, 1 * kMs, {{managed, AccessKind::Read}});
  int64_t address = 0;
  {
    Statement q = trace.db().prepare("SELECT address FROM allocations WHERE id = ?");
    q.bind(1, managed);
    q.step();
    address = q.int64(0);
  }
  for (auto [start, to_device] : {std::pair{1 * kMs, true}, {3 * kMs, false}, {4 * kMs, true}}) {
    testing::UmEventRow row;
    row.counter_kind = to_device ? UmCounterKind::BytesHtoD : UmCounterKind::BytesDtoH;
    row.address = address;
    row.bytes = row.value = 4 * kMiB;
    row.alloc_id = managed;
    row.alloc_offset = 0;
    row.dst_device = to_device ? std::optional<int64_t>(0) : std::nullopt;
    row.src_device = to_device ? std::nullopt : std::optional<int64_t>(0);
    row.start_ns = start;
    row.end_ns = start + 400'000;
    row.cause = static_cast<int64_t>(UmMigrationCause::Coherence);
    trace.add(row);
  }
  model::SystemModel machine;
  machine.paths.push_back({*model::LinkPath::parse("prefetch.HtoD.gpu0"), {},
                           model::LinkModel::constant(0, 100.0), ""});
  SystemFileCost system("system.json", machine);
  std::vector<Finding> all = all_findings(&system);
  std::optional<size_t> thrashing;
  std::vector<size_t> on_demand;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].rule == "um_thrashing") thrashing = i;
    if (all[i].rule == "um_on_demand_migration") on_demand.push_back(i);
  }
  ASSERT_TRUE(thrashing);
  ASSERT_FALSE(on_demand.empty());
  for (size_t i : on_demand) {
    EXPECT_NE(std::find(all[i].overlaps.begin(), all[i].overlaps.end(), *thrashing),
              all[i].overlaps.end());
    EXPECT_NE(std::find(all[*thrashing].overlaps.begin(), all[*thrashing].overlaps.end(), i),
              all[*thrashing].overlaps.end());
  }
  std::ostringstream text;
  write_findings_text(text, all);
  EXPECT_NE(text.str().find("do not add their savings"), std::string::npos) << text.str();
}

TEST(FindingsOutput, TheTopTenAndOneLineForTheRest) {
  std::vector<Finding> findings;
  for (int i = 0; i < 30; ++i) findings.push_back(priced("sync_api", (30 - i) * kMs, kMs));
  std::ostringstream text;
  write_findings_text(text, findings, kShownFindings);
  EXPECT_NE(text.str().find("\n10. [sync_api]"), std::string::npos) << text.str();
  EXPECT_EQ(text.str().find("\n11. "), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("then those whose saving is unknown (by cost), start-up last"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("20 more finding(s) with smaller savings left out: --all shows every"),
            std::string::npos)
      << text.str();
  EXPECT_EQ(findings_json(findings, kShownFindings).size(), 10u);
  EXPECT_EQ(findings_table(findings, kShownFindings).rows.size(), 10u);
  Table left_out = left_out_table(findings, kShownFindings);
  ASSERT_EQ(left_out.rows.size(), 1u);
  EXPECT_EQ(left_out.rows[0], (std::vector<Cell>{int64_t{10}, int64_t{20}}));
  std::ostringstream every;
  write_findings_text(every, findings);
  EXPECT_NE(every.str().find("\n30. [sync_api]"), std::string::npos);
  EXPECT_EQ(every.str().find("left out"), std::string::npos);
}

// A finding people read is at most 8 lines: what, where, cost and saving,
// fix and its table's first rows, kernel names shortened; its row ids and
// whole names are in JSON (and the text with --rows).
TEST(FindingsOutput, AFindingIsAtMostEightLinesWithShortNames) {
  std::string name = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, "
                     "std::array<char*, 1ul> >(int, at::native::FillFunctor<int>, std::array<char*, 1ul>)";
  Finding f = priced("launch_bound_kernels", 5 * kMs, 10 * kMs);
  f.names = {name};
  f.nvtx = "step";
  for (int64_t row = 1; row <= 64; ++row) f.rows.push_back({"kernels", row});
  f.overlaps = {1, 2};
  f.steps = 10;
  f.details = {"kernels", {"kernel", "launches per step", "gpu_ns_each"}, {}};
  for (int i = 0; i < 6; ++i) f.details.rows.push_back({name + std::to_string(i), int64_t{40}, int64_t{2'000}});
  std::ostringstream text;
  write_findings_text(text, {f});
  std::string out = text.str();
  std::string finding = out.substr(out.find("1. ["));
  EXPECT_LE(std::count(finding.begin(), finding.end(), '\n'), 8) << out;
  EXPECT_EQ(out.find("std::array"), std::string::npos) << out;
  EXPECT_NE(out.find("at::native::vectorized_elementwise_kernel<FillFunctor<int>>"), std::string::npos) << out;
  // Its kernels differ past what the short name keeps: numbered, so no two read alike.
  EXPECT_NE(out.find("at::native::vectorized_elementwise_kernel<FillFunctor<int>> [2] | 40 | 2.0 us"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("kernels:12"), std::string::npos) << out;
  EXPECT_NE(out.find("500.0 us per step (5.00 ms over 10 steps)"), std::string::npos) << out;
  std::ostringstream with_rows;
  write_findings_text(with_rows, {f}, SIZE_MAX, true);
  EXPECT_NE(with_rows.str().find("kernels:12"), std::string::npos);
  nlohmann::json json = findings_json({f});
  EXPECT_EQ(json[0]["where"]["names"][0], name);
  EXPECT_EQ(json[0]["where"]["rows"].size(), 64u);
  EXPECT_EQ(json[0]["saving_per_step_ns"], 500'000);
  EXPECT_EQ(json[0]["details"]["rows"][0][0], name + "0");
  Table csv = findings_table({f});
  ASSERT_EQ(csv.columns.back(), "saving_per_step_ns");
  EXPECT_EQ(csv.rows[0].back(), Cell(int64_t{500'000}));
}

// The text prints a details column by what its name says it holds: `_ns`
// a time, `bytes` a size; JSON keeps the numbers.
TEST(FindingsOutput, DetailsColumnsPrintTimesAndSizesInUnits) {
  Finding f;
  f.rule = "memory_freed_late";
  f.saving_bytes = 3 << 20;
  f.details = {"pieces", {"made_by", "pieces", "bytes", "held_ns"}, {}};
  f.details.rows.push_back({std::string("fill()"), int64_t{3}, int64_t{3 << 20}, int64_t{12'500'000}});
  std::ostringstream text;
  write_findings_text(text, {f});
  EXPECT_NE(text.str().find("fill | 3 | 3 MiB | 12.50 ms"), std::string::npos) << text.str();
  EXPECT_EQ(findings_json({f})[0]["details"]["rows"][0][2], 3 << 20);
}

}  // namespace
}  // namespace apptracer::diagnose
