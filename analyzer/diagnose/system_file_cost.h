// The link model of a system file (`apptracer links -o system.json`, issue
// 20), read and resolved by the machine model (analyzer/model): one format
// and one lookup for whatif and diagnoses. A diagnosis's path maps to a
// logical path (model/link_path.h); a NUMA node or GPU that was not measured
// takes the closest measured one (SystemModel::resolve).
#pragma once

#include <string>

#include "analyzer/model/system_model.h"
#include "analyzer/diagnose/transfer_cost.h"

namespace apptracer::diagnose {

// The logical path a diagnosis's path stands for, or nullopt where the
// machine model has none (host to host).
std::optional<model::LinkPath> link_path_of(const TransferPath& path);

class SystemFileCost : public TransferCost {
 public:
  // Throws std::runtime_error with one line naming the file and what is wrong.
  explicit SystemFileCost(const std::string& path);
  SystemFileCost(std::string source, model::SystemModel system);

  std::optional<double> time_ns(const TransferPath& path, int64_t bytes) const override;
  std::string describe(const TransferPath& path) const override;
  const model::GraphLaunch* graph_launch() const override;
  const model::TracingCost* tracing_cost() const override;

 private:
  std::string source_;
  model::SystemModel system_;
};

}  // namespace apptracer::diagnose
