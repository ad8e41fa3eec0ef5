// The link model of the trace itself: per path, the copies it timed are
// fitted to t = c + bytes / BW by least squares (so a path needs copies of at
// least two sizes to be known: one size cannot tell latency from bandwidth).
// A path the trace never used is unknown; `--system` supplies it.
#pragma once

#include <map>
#include <tuple>
#include <vector>

#include "analyzer/diagnose/trace_facts.h"
#include "analyzer/diagnose/transfer_cost.h"

namespace apptracer::diagnose {

struct TransferSample {
  TransferPath path;
  int64_t bytes = 0;
  int64_t duration_ns = 0;
};

// Least-squares fit of samples; nullopt unless there are two sizes at least
// a factor of 2 apart and the fit is physical (positive bandwidth; a
// negative intercept is clamped to 0 and the bandwidth refitted).
std::optional<LinkFit> fit_link(const std::vector<TransferSample>& samples);

class MeasuredTransferCost : public TransferCost {
 public:
  explicit MeasuredTransferCost(const TraceFacts& facts);
  explicit MeasuredTransferCost(std::vector<TransferSample> samples);

  std::optional<double> time_ns(const TransferPath& path, int64_t bytes) const override;
  std::string describe(const TransferPath& path) const override;
  // The fit for a path (samples matching it: device and NUMA node only when given).
  std::optional<LinkFit> fit(const TransferPath& path) const;

 private:
  std::vector<TransferSample> samples_;
  // Each path's fit, made once: rules price every copy of a long run, and a
  // fit reads every sample.
  using PathKey = std::tuple<CopyKind, MemoryKind, std::optional<int64_t>, std::optional<int64_t>>;
  mutable std::map<PathKey, std::optional<LinkFit>> fits_;
};

// The path a copy took.
TransferPath path_of(const Transfer& copy);

}  // namespace apptracer::diagnose
