// The link models behind the savings: least-squares fits of the trace's own
// copies, and system files.
#include <gtest/gtest.h>

#include <stdexcept>

#include "measured_transfer_cost.h"
#include "system_file_cost.h"

namespace apptracer::diagnose {
namespace {

TransferPath pinned_htod() {
  TransferPath path;
  path.kind = CopyKind::HtoD;
  path.host_memory = MemoryKind::Pinned;
  path.device = 0;
  return path;
}

TEST(LinkFit, TwoSizesGiveLatencyAndBandwidth) {
  std::vector<TransferSample> samples = {{pinned_htod(), 1000, 2100},
                                         {pinned_htod(), 1'000'000, 102'000},
                                         {pinned_htod(), 1000, 2100}};
  std::optional<LinkFit> fit = fit_link(samples);
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->latency_ns, 2000, 1e-6);
  EXPECT_NEAR(fit->bandwidth_gbps, 10, 1e-9);
}

TEST(LinkFit, OneSizeCannotTellLatencyFromBandwidth) {
  std::vector<TransferSample> samples = {{pinned_htod(), 1000, 2100}, {pinned_htod(), 1500, 2200}};
  EXPECT_FALSE(fit_link(samples));
}

TEST(LinkFit, ANegativeInterceptGoesThroughTheOrigin) {
  std::vector<TransferSample> samples = {{pinned_htod(), 1000, 50}, {pinned_htod(), 10'000, 1000}};
  std::optional<LinkFit> fit = fit_link(samples);
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->latency_ns, 0);
  EXPECT_NEAR(fit->bandwidth_gbps, 11'000.0 / 1050.0, 1e-9);
}

TEST(MeasuredTransferCost, PathsAreKeptApart) {
  TransferPath pageable = pinned_htod();
  pageable.host_memory = MemoryKind::Pageable;
  MeasuredTransferCost cost({{pinned_htod(), 1000, 2100}, {pinned_htod(), 1'000'000, 102'000}});
  EXPECT_NEAR(*cost.time_ns(pinned_htod(), 10'000), 3000, 1e-6);
  EXPECT_FALSE(cost.time_ns(pageable, 10'000));
  EXPECT_NE(cost.describe(pageable).find("give --system"), std::string::npos);
  EXPECT_NE(cost.describe(pinned_htod()).find("10.00 GB/s, 2.0 us latency"), std::string::npos)
      << cost.describe(pinned_htod());
}

TEST(SystemFile, PiecewiseBandwidthAndTheMostSpecificPath) {
  SystemFileCost cost("s.json", parse_system_file(R"({
    "machine": {"host": "h"}, "date": "2026-01-01",
    "paths": [
      {"kind": "HtoD", "host_memory": "pinned", "latency_ns": 1000,
       "bandwidth": [{"from_bytes": 0, "gbps": 5}, {"from_bytes": 1048576, "gbps": 25}]},
      {"kind": "HtoD", "host_memory": "pinned", "device": 0, "numa_node": 1, "latency_ns": 3000,
       "bandwidth": [{"gbps": 10}]}
    ]})", "s.json"));
  TransferPath path = pinned_htod();
  EXPECT_DOUBLE_EQ(*cost.time_ns(path, 1000), 1000 + 1000 / 5.0);
  EXPECT_DOUBLE_EQ(*cost.time_ns(path, 2 << 20), 1000 + (2 << 20) / 25.0);
  path.numa_node = 1;
  EXPECT_DOUBLE_EQ(*cost.time_ns(path, 1000), 3000 + 100);
  path.kind = CopyKind::DtoH;
  EXPECT_FALSE(cost.time_ns(path, 1000));
  EXPECT_EQ(cost.describe(path), "s.json has no DtoH pinned, device 0, NUMA node 1 path");
}

TEST(SystemFile, ErrorsNameTheFileAndWhatIsWrong) {
  EXPECT_THROW(
      {
        try {
          parse_system_file("{\"paths\": 3}", "bad.json");
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(),
                       "bad.json: not a system file (no \"paths\" array); write one with "
                       "'apptracer links -o system.json'");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_THROW(parse_system_file("not json", "x.json"), std::runtime_error);
  EXPECT_THROW(parse_system_file(R"({"paths": [{"kind": "sideways", "latency_ns": 1,
                                    "bandwidth": [{"gbps": 1}]}]})", "k.json"),
               std::runtime_error);
  EXPECT_THROW(SystemFileCost("/nonexistent/system.json"), std::runtime_error);
}

}  // namespace
}  // namespace apptracer::diagnose
