// The default link model for paths the trace did not measure: the PCIe link
// each GPU generation ships with (traces record the compute capability, not
// the link), at stated fractions of its nominal rate. Named in the output so
// a user knows the saving is an estimate from a nominal link, and can give
// --system for the machine's measured one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/diagnose/measured_transfer_cost.h"
#include "analyzer/diagnose/trace_facts.h"
#include "analyzer/diagnose/transfer_cost.h"

namespace apptracer::diagnose {

struct NominalLink {
  int generation = 0;    // PCIe generation
  double x16_gbps = 0;   // its nominal rate per direction at x16, GB/s
};

// The PCIe generation of GPUs of this compute capability: Gen5 from Hopper
// (9.0) on, Gen4 for Ampere and Ada (8.x), Gen3 before.
NominalLink nominal_link(int64_t cc_major);

inline constexpr double kPinnedShare = 0.8;     // pinned copies reach ~80% of nominal
inline constexpr double kPageableShare = 0.33;  // pageable ones about a third of pinned
inline constexpr double kNominalLatencyNs = 2000;

class NominalLinkCost : public TransferCost {
 public:
  explicit NominalLinkCost(const std::vector<Device>& devices);

  // Host-device copies of pinned or pageable memory on a device whose
  // compute capability is recorded; nullopt for any other path.
  std::optional<double> time_ns(const TransferPath& path, int64_t bytes) const override;
  std::string describe(const TransferPath& path) const override;
  // "PCIe Gen5 x16 nominal (63.0 GB/s per direction): pinned at 80% of it,
  // pageable at 33% of pinned", per generation the devices have; "" for none.
  std::string name() const;

 private:
  const NominalLink* link_of(const TransferPath& path) const;
  std::optional<LinkFit> fit(const TransferPath& path) const;
  std::vector<std::pair<int64_t, NominalLink>> links_;  // by device id
};

// The trace's measured fit where it has one, else the nominal link.
class MeasuredOrNominalCost : public TransferCost {
 public:
  explicit MeasuredOrNominalCost(const TraceFacts& facts);
  std::optional<double> time_ns(const TransferPath& path, int64_t bytes) const override;
  std::string describe(const TransferPath& path) const override;
  std::string name() const;

 private:
  MeasuredTransferCost measured_;
  NominalLinkCost nominal_;
};

}  // namespace apptracer::diagnose
