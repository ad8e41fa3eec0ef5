// The time one transfer takes over one path (Pearson's thesis, ch. 3):
//
//   t(bytes) = c + bytes / BW(bytes)
//
// c is the path's fixed cost (ns): what even a 4-byte copy pays. BW(bytes)
// is the rate the rest moves at, which itself depends on the size: small
// copies never reach the link's peak (DMA setup, packetization, and for
// pageable memory the driver's staging through pinned buffers), so one
// constant bandwidth would misprice mid-sized copies by up to several times.
//
// log BW is piecewise-linear in log2(bytes) between knots at the measured
// sizes, and BW constant beyond the first and last. Why this form: `apptracer
// links` measures log-spaced sizes, and the curve between latency-bound and
// bandwidth-bound sizes has no simple closed form on real machines (staging
// chunk sizes, PCIe packet sizes, copy-engine pipelining all bend it).
// Interpolating between the measured sizes reproduces every measured median
// exactly and assumes no shape; doing it in log-log space (a power law
// between two knots) keeps the time of a transfer growing with its size
// between knots too, which linear interpolation of BW itself does not
// where BW rises fast. Bandwidths are in GB/s (10^9 bytes/s), numerically
// bytes per nanosecond.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace apptracer::model {

struct BandwidthKnot {
  int64_t bytes = 0;
  double gbps = 0;  // GB/s = bytes per ns
};

// One measured repetition: a transfer of `bytes` took `ns`.
struct Sample {
  int64_t bytes = 0;
  double ns = 0;
};

class LinkModel {
 public:
  LinkModel() = default;
  // Knots in increasing size, each with a positive bandwidth.
  LinkModel(double latency_ns, std::vector<BandwidthKnot> knots);
  // One bandwidth at every size.
  static LinkModel constant(double latency_ns, double gbps);

  double latency_ns() const { return latency_ns_; }
  const std::vector<BandwidthKnot>& knots() const { return knots_; }
  bool empty() const { return knots_.empty(); }

  // BW(bytes) in GB/s: a power law between the knots around `bytes`.
  double bandwidth_gbps(int64_t bytes) const;
  // c + bytes / BW(bytes), in ns.
  double transfer_ns(int64_t bytes) const;
  // The bandwidth of the largest measured size: what large copies get.
  double peak_gbps() const;

  // The same curve with another fixed cost and/or every knot scaled so that
  // the largest size gets `peak_gbps` (the shape of the curve is kept: small
  // copies stay as much below the peak as they were).
  LinkModel with(std::optional<double> latency_ns, std::optional<double> peak_gbps) const;

 private:
  double latency_ns_ = 0;
  std::vector<BandwidthKnot> knots_;
};

// Fits a model to measurements (any order, several repetitions per size):
//  1. each size's median time (robust to the outliers a shared machine
//     gives), made non-decreasing with size (a larger copy never takes less
//     time; where medians dip, latency noise is larger than the bytes' share);
//  2. c from the two smallest sizes, assuming one bandwidth between them:
//     t0 = c + s0/B, t1 = c + s1/B; clamped to [0, t0] (noise can make the
//     line's intercept fall outside);
//  3. a knot at each size with BW = s / (t - c); a size whose time is all
//     latency (t = c) takes the bandwidth of the next size that has one.
// Throws std::invalid_argument without samples.
LinkModel fit_link_model(const std::vector<Sample>& samples);

// The median of each size's repetitions, by increasing size.
std::vector<Sample> median_per_size(const std::vector<Sample>& samples);

}  // namespace apptracer::model
