#include "analyzer/diagnose/link_model_choice.h"

#include "analyzer/diagnose/nominal_link_cost.h"
#include "analyzer/diagnose/system_file_cost.h"

namespace apptracer::diagnose {

LinkModel choose_link_model(const TraceFacts& facts, const std::string& system_file) {
  if (!system_file.empty())
    return {std::make_unique<SystemFileCost>(system_file), "system file " + system_file};
  auto cost = std::make_unique<MeasuredOrNominalCost>(facts);
  std::string name = cost->name();
  return {std::move(cost), name};
}

}  // namespace apptracer::diagnose
