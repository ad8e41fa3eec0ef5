// Holistic Trace Analysis's tables computed from a trace (analyses.h), on
// traces whose answers are known.
#include "analyzer/diagnose/analyses.h"

#include "diagnose_fixture.h"

namespace apptracer::diagnose {
namespace {

class Analyses : public DiagnoseTest {
 public:
  Table table(Table (*analysis)(const TraceFacts&)) {
    trace::Trace model(trace.db());
    TraceFacts facts = read_trace_facts(model);
    return analysis(facts);
  }
};

// On one stream a, b, c, a, b, c, a, b, d (and on another, a, b once more):
// "a -> b" four times, "b -> c" and "a -> b -> c" twice, as are "c -> a"
// and "c -> a -> b"; those seen once are not listed. Ties go by name.
TEST_F(Analyses, KernelSequencesCountRunsOfTwoAndThreeOnAStream) {
  int64_t at = 1'000'000;
  for (const char* name : {"a", "b", "c", "a", "b", "c", "a", "b", "d"}) kernel(name, at += 10'000, 1'000, {});
  for (const char* name : {"a", "b"}) kernel(name, at += 10'000, 1'000, {}, 8);
  Table sequences = table(kernel_sequences);
  std::vector<std::vector<std::string>> found;
  for (const auto& row : sequences.rows) {
    found.push_back({std::get<std::string>(row[0]), std::to_string(std::get<int64_t>(row[1])),
                     std::to_string(std::get<int64_t>(row[2]))});
  }
  EXPECT_EQ(found, (std::vector<std::vector<std::string>>{{"a() -> b()", "2", "4"},
                                                          {"a() -> b() -> c()", "3", "2"},
                                                          {"b() -> c()", "2", "2"},
                                                          {"b() -> c() -> a()", "3", "2"},
                                                          {"c() -> a()", "2", "2"},
                                                          {"c() -> a() -> b()", "3", "2"}}));
}

// A stream whose kernels ran in another order than their ids (c, a, b, c,
// a, b recorded; a, b, c, a, b, c run): sequences follow the GPU's order.
TEST_F(Analyses, KernelSequencesFollowTheGpusOrderOnAStream) {
  for (auto [name, start] : {std::pair{"c", 30}, {"a", 10}, {"b", 20}, {"c", 60}, {"a", 40}, {"b", 50}})
    kernel(name, 1'000'000 + start * 10'000, 1'000, {}, 9);
  Table sequences = table(kernel_sequences);
  std::vector<std::pair<std::string, int64_t>> found;
  for (const auto& row : sequences.rows) found.emplace_back(std::get<std::string>(row[0]), std::get<int64_t>(row[2]));
  EXPECT_EQ(found, (std::vector<std::pair<std::string, int64_t>>{
                       {"a() -> b()", 2}, {"a() -> b() -> c()", 2}, {"b() -> c()", 2}}));
}

// Two kernels 50 us apart: the second's launch call began 1 us before it
// started, so 49 us of the gap the GPU waited on the host, 1 us on the launch.
TEST_F(Analyses, IdleTimeSplitsIntoHostWaitAndLaunchWait) {
  kernel("first", 1'000'000, 10'000, {});
  kernel("second", 1'060'000, 10'000, {});
  Table idle = table(idle_breakdown);
  ASSERT_EQ(idle.rows.size(), 1u);
  const auto& row = idle.rows[0];
  EXPECT_EQ(std::get<int64_t>(row[1]), 1);         // gaps
  EXPECT_EQ(std::get<int64_t>(row[2]), 50'000);    // idle
  EXPECT_EQ(std::get<int64_t>(row[3]), 49'000);    // host wait
  EXPECT_EQ(std::get<int64_t>(row[4]), 1'000);     // launch wait
}

}  // namespace
}  // namespace apptracer::diagnose
