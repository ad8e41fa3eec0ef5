#include "analyzer/model/link_model.h"

#include "analyzer/model/median.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace apptracer::model {

namespace {

// What a path whose every measured size was pure latency moves at: bytes
// cost nothing measurable, so any huge rate says so without infinities
// (which JSON cannot hold).
constexpr double kUnmeasurableGbps = 1e6;

}  // namespace

LinkModel::LinkModel(double latency_ns, std::vector<BandwidthKnot> knots)
    : latency_ns_(latency_ns), knots_(std::move(knots)) {
  for (size_t i = 0; i < knots_.size(); ++i) {
    if (!(knots_[i].gbps > 0) || knots_[i].bytes <= 0 ||
        (i > 0 && knots_[i].bytes <= knots_[i - 1].bytes)) {
      throw std::invalid_argument(
          "bandwidth knots need increasing sizes and positive bandwidths");
    }
  }
  if (!(latency_ns_ >= 0)) throw std::invalid_argument("latency must be zero or more");
}

LinkModel LinkModel::constant(double latency_ns, double gbps) {
  return LinkModel(latency_ns, {BandwidthKnot{1, gbps}});
}

double LinkModel::bandwidth_gbps(int64_t bytes) const {
  if (knots_.empty()) return kUnmeasurableGbps;
  if (bytes <= knots_.front().bytes) return knots_.front().gbps;
  if (bytes >= knots_.back().bytes) return knots_.back().gbps;
  auto after = std::upper_bound(knots_.begin(), knots_.end(), bytes,
                                [](int64_t b, const BandwidthKnot& k) { return b < k.bytes; });
  const BandwidthKnot& hi = *after;
  const BandwidthKnot& lo = *(after - 1);
  double x = std::log2(static_cast<double>(bytes));
  double x0 = std::log2(static_cast<double>(lo.bytes));
  double x1 = std::log2(static_cast<double>(hi.bytes));
  return lo.gbps * std::pow(hi.gbps / lo.gbps, (x - x0) / (x1 - x0));
}

double LinkModel::transfer_ns(int64_t bytes) const {
  if (bytes <= 0) return latency_ns_;
  return latency_ns_ + static_cast<double>(bytes) / bandwidth_gbps(bytes);
}

double LinkModel::peak_gbps() const {
  return knots_.empty() ? kUnmeasurableGbps : knots_.back().gbps;
}

LinkModel LinkModel::with(std::optional<double> latency_ns, std::optional<double> peak_gbps) const {
  std::vector<BandwidthKnot> knots = knots_;
  if (peak_gbps) {
    if (knots.empty()) knots.push_back({1, *peak_gbps});
    double scale = *peak_gbps / knots.back().gbps;
    for (BandwidthKnot& knot : knots) knot.gbps *= scale;
  }
  return LinkModel(latency_ns.value_or(latency_ns_), std::move(knots));
}

std::vector<Sample> median_per_size(const std::vector<Sample>& samples) {
  std::map<int64_t, std::vector<double>> by_size;
  for (const Sample& sample : samples) by_size[sample.bytes].push_back(sample.ns);
  std::vector<Sample> medians;
  for (auto& [bytes, times] : by_size) medians.push_back({bytes, median(times)});
  return medians;
}

LinkModel fit_link_model(const std::vector<Sample>& samples) {
  std::vector<Sample> points = median_per_size(samples);
  points.erase(std::remove_if(points.begin(), points.end(),
                              [](const Sample& p) { return p.bytes <= 0 || !(p.ns >= 0); }),
               points.end());
  if (points.empty()) throw std::invalid_argument("no samples to fit");
  for (size_t i = 1; i < points.size(); ++i) points[i].ns = std::max(points[i].ns, points[i - 1].ns);

  double latency = points[0].ns;
  if (points.size() >= 2 && points[1].ns > points[0].ns) {
    double rate = static_cast<double>(points[1].bytes - points[0].bytes) /
                  (points[1].ns - points[0].ns);
    latency = std::clamp(points[0].ns - static_cast<double>(points[0].bytes) / rate, 0.0,
                         points[0].ns);
  }

  std::vector<BandwidthKnot> knots;
  std::vector<size_t> unmeasured;  // knots waiting for the next measurable bandwidth
  for (const Sample& point : points) {
    double excess = point.ns - latency;
    if (excess <= 0) {
      unmeasured.push_back(knots.size());
      knots.push_back({point.bytes, 0});
      continue;
    }
    double gbps = static_cast<double>(point.bytes) / excess;
    for (size_t index : unmeasured) knots[index].gbps = gbps;
    unmeasured.clear();
    knots.push_back({point.bytes, gbps});
  }
  for (size_t index : unmeasured) knots[index].gbps = kUnmeasurableGbps;
  return LinkModel(latency, std::move(knots));
}

}  // namespace apptracer::model
