// Which link model estimates savings: the system file given with --system
// (`apptracer links`), else the bandwidths measured in the trace and, for
// paths it did not measure, the nominal PCIe link (nominal_link_cost.h).
#pragma once

#include <memory>
#include <string>

#include "analyzer/diagnose/trace_facts.h"
#include "analyzer/diagnose/transfer_cost.h"

namespace apptracer::diagnose {

struct LinkModel {
  std::unique_ptr<TransferCost> cost;
  std::string name;  // "bandwidths measured in the trace; ..." or "system file PATH"
};

// Throws std::runtime_error (one line) when the system file is unusable.
LinkModel choose_link_model(const TraceFacts& facts, const std::string& system_file);

}  // namespace apptracer::diagnose
