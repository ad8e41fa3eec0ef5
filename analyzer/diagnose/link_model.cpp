#include "link_model.h"

#include "measured_transfer_cost.h"
#include "system_file_cost.h"

namespace apptracer::diagnose {

LinkModel choose_link_model(const TraceFacts& facts, const std::string& system_file) {
  if (!system_file.empty())
    return {std::make_unique<SystemFileCost>(system_file), "system file " + system_file};
  return {std::make_unique<MeasuredTransferCost>(facts),
          "bandwidths measured in the trace (give --system for a machine's link model)"};
}

}  // namespace apptracer::diagnose
