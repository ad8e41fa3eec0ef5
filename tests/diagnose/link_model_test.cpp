// The link models behind the savings: least-squares fits of the trace's own
// copies, and system files.
#include <gtest/gtest.h>

#include <stdexcept>

#include "analyzer/diagnose/measured_transfer_cost.h"
#include "analyzer/model/system_file.h"
#include "analyzer/diagnose/system_file_cost.h"

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

// The file `apptracer links` writes, read by the machine model: one format
// for whatif and diagnoses.
constexpr const char* kSystem = R"({"format": "apptracer system", "version": 1,
  "machine": {"hostname": "h", "gpus": [{"ordinal": 0, "name": "G", "numa_node": 0}],
              "numa_nodes": [{"id": 0}, {"id": 1}]},
  "paths": [
    {"name": "HtoD.pinned.node0.gpu0",
     "model": {"latency_ns": 1000, "bandwidth": [{"bytes": 4, "gbps": 5}, {"bytes": 1048576, "gbps": 25}]}},
    {"name": "HtoD.pinned.node1.gpu0",
     "model": {"latency_ns": 3000, "bandwidth": [{"bytes": 4, "gbps": 10}]}},
    {"name": "prefetch.HtoD.gpu0",
     "model": {"latency_ns": 0, "bandwidth": [{"bytes": 4096, "gbps": 100}]}}
  ]})";

TEST(SystemFile, PathsResolveThroughTheMachineModel) {
  SystemFileCost cost("s.json", model::system_from_json(kSystem, "s.json"));
  TransferPath path = pinned_htod();
  path.numa_node = 0;
  EXPECT_DOUBLE_EQ(*cost.time_ns(path, 4), 1000 + 4 / 5.0);
  EXPECT_DOUBLE_EQ(*cost.time_ns(path, 2 << 20), 1000 + (2 << 20) / 25.0);
  path.numa_node = 1;
  EXPECT_DOUBLE_EQ(*cost.time_ns(path, 1000), 3000 + 100);
  // The node unknown: the GPU's own node.
  path.numa_node.reset();
  EXPECT_DOUBLE_EQ(*cost.time_ns(path, 4), 1000 + 4 / 5.0);
  EXPECT_NE(cost.describe(path).find("path HtoD.pinned.node0.gpu0 (closest measured to "
                                     "HtoD.pinned.gpu0)"),
            std::string::npos)
      << cost.describe(path);
  path.host_memory = MemoryKind::Managed;
  EXPECT_DOUBLE_EQ(*cost.time_ns(path, 1 << 20), (1 << 20) / 100.0);
  path.host_memory = MemoryKind::Pinned;
  path.kind = CopyKind::DtoH;
  EXPECT_FALSE(cost.time_ns(path, 1000));
  EXPECT_EQ(cost.describe(path), "system file s.json has no DtoH pinned, device 0 path");
  path.kind = CopyKind::HtoH;
  EXPECT_FALSE(cost.time_ns(path, 1000));
}

TEST(SystemFile, ErrorsNameTheFileAndWhatIsWrong) {
  EXPECT_THROW(
      {
        try {
          model::system_from_json("{\"paths\": 3}", "bad.json");
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find("bad.json: not an apptracer system file"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      std::runtime_error);
  EXPECT_THROW(SystemFileCost("/nonexistent/system.json"), std::runtime_error);
}

}  // namespace
}  // namespace apptracer::diagnose
