// The transfer-time model and its fit: synthetic measurements made from a
// known latency and bandwidth curve must give them back.
#include "analyzer/model/link_model.h"

#include <gtest/gtest.h>

#include <cmath>

namespace apptracer::model {
namespace {

// A link of 2 µs fixed cost whose bandwidth grows with size: 1 GB/s up to
// 4 KiB, then doubling per factor 4 in size up to 16 GB/s at 1 MiB and more.
constexpr double kLatency = 2000;
double true_gbps(int64_t bytes) {
  if (bytes <= 4096) return 1;
  double steps = std::log2(static_cast<double>(bytes) / 4096) / 2;
  return std::min(16.0, std::pow(2.0, steps));
}

std::vector<int64_t> sizes() {
  std::vector<int64_t> all;
  for (int64_t bytes = 4; bytes <= (int64_t{256} << 20); bytes *= 4) all.push_back(bytes);
  return all;
}

std::vector<Sample> exact_samples() {
  std::vector<Sample> samples;
  for (int64_t bytes : sizes()) samples.push_back({bytes, kLatency + bytes / true_gbps(bytes)});
  return samples;
}

TEST(LinkModelFit, RecoversTheLatencyAndTheBandwidthAtEveryMeasuredSize) {
  LinkModel model = fit_link_model(exact_samples());
  EXPECT_NEAR(model.latency_ns(), kLatency, 1e-6);
  ASSERT_EQ(model.knots().size(), sizes().size());
  for (const BandwidthKnot& knot : model.knots()) {
    EXPECT_NEAR(knot.gbps, true_gbps(knot.bytes), 1e-9 * true_gbps(knot.bytes)) << knot.bytes;
    EXPECT_NEAR(model.transfer_ns(knot.bytes), kLatency + knot.bytes / true_gbps(knot.bytes), 1e-6);
  }
  EXPECT_DOUBLE_EQ(model.peak_gbps(), 16);
}

TEST(LinkModelFit, MediansIgnoreOutlyingRepetitions) {
  std::vector<Sample> samples;
  for (const Sample& exact : exact_samples()) {
    // Five repetitions: three exact, one preempted (10x), one impossibly fast.
    for (double factor : {1.0, 10.0, 1.0, 0.2, 1.0}) samples.push_back({exact.bytes, exact.ns * factor});
  }
  LinkModel model = fit_link_model(samples);
  EXPECT_NEAR(model.latency_ns(), kLatency, 1e-6);
  EXPECT_NEAR(model.bandwidth_gbps(1 << 20), 16, 1e-9);
}

TEST(LinkModelFit, ALargerCopyNeverTakesLessTime) {
  // 64 B measured faster than 16 B: latency noise. The fit treats 64 B as
  // taking as long as 16 B, so no size is priced below a smaller one.
  std::vector<Sample> samples = {{4, 2000}, {16, 2012}, {64, 2005}, {256, 2100}, {1024, 2500}};
  LinkModel model = fit_link_model(samples);
  for (int64_t bytes = 4; bytes < 1024; bytes += 4) {
    EXPECT_LE(model.transfer_ns(bytes), model.transfer_ns(bytes + 4) + 1e-9) << bytes;
  }
  EXPECT_NEAR(model.transfer_ns(64), 2012, 1e-6);
}

TEST(LinkModelFit, LatencyComesFromTheTwoSmallestSizes) {
  // t = 1000 + s / 0.5 at 4 and 8 bytes: the line through them meets 0 at 1000.
  LinkModel model = fit_link_model({{4, 1008}, {8, 1016}, {1 << 20, 1000 + (1 << 20) / 10.0}});
  EXPECT_NEAR(model.latency_ns(), 1000, 1e-9);
  EXPECT_NEAR(model.bandwidth_gbps(4), 0.5, 1e-12);
  EXPECT_NEAR(model.bandwidth_gbps(1 << 20), 10, 1e-9);
}

TEST(LinkModelFit, PureLatencyAtSmallSizesTakesTheNextMeasurableBandwidth) {
  LinkModel model = fit_link_model({{4, 500}, {8, 500}, {4096, 500 + 4096 / 2.0}});
  EXPECT_DOUBLE_EQ(model.latency_ns(), 500);
  EXPECT_DOUBLE_EQ(model.bandwidth_gbps(4), 2);
  EXPECT_DOUBLE_EQ(model.transfer_ns(8), 504);
}

TEST(LinkModelFit, NoSamplesIsAnError) { EXPECT_THROW(fit_link_model({}), std::invalid_argument); }

TEST(LinkModel, LogBandwidthIsLinearInLogSizeBetweenKnotsAndConstantBeyond) {
  LinkModel model(100, {{1024, 1}, {4096, 4}});
  EXPECT_DOUBLE_EQ(model.bandwidth_gbps(2048), 2);  // halfway in log2 size: the geometric mean
  EXPECT_DOUBLE_EQ(model.transfer_ns(2048), 100 + 2048 / 2.0);
  EXPECT_DOUBLE_EQ(model.bandwidth_gbps(16), 1);
  EXPECT_DOUBLE_EQ(model.bandwidth_gbps(int64_t{1} << 30), 4);
  EXPECT_DOUBLE_EQ(model.transfer_ns(0), 100);
}

TEST(LinkModel, ChangingLatencyAndPeakKeepsTheCurvesShape) {
  LinkModel model(100, {{1024, 1}, {4096, 4}});
  LinkModel faster = model.with(std::nullopt, 8.0);
  EXPECT_DOUBLE_EQ(faster.latency_ns(), 100);
  EXPECT_DOUBLE_EQ(faster.bandwidth_gbps(1024), 2);
  EXPECT_DOUBLE_EQ(faster.peak_gbps(), 8);
  LinkModel closer = model.with(10.0, std::nullopt);
  EXPECT_DOUBLE_EQ(closer.latency_ns(), 10);
  EXPECT_DOUBLE_EQ(closer.bandwidth_gbps(4096), 4);
}

TEST(LinkModel, RejectsKnotsOutOfOrderOrWithoutBandwidth) {
  EXPECT_THROW(LinkModel(0, {{4096, 1}, {1024, 2}}), std::invalid_argument);
  EXPECT_THROW(LinkModel(0, {{1024, 0}}), std::invalid_argument);
  EXPECT_THROW(LinkModel(-1, {{1024, 1}}), std::invalid_argument);
}

}  // namespace
}  // namespace apptracer::model
