// The replay ops (ReplayInput::ops) the DVDG's ops are: both are the trace's
// rows, so an op of either is found by its kind and row id.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "analyzer/dvdg/graph.h"
#include "analyzer/whatif/replay_input.h"

namespace apptracer::whatif {

class OpIndex {
 public:
  explicit OpIndex(const ReplayInput& input);
  // The replay op of a DVDG op, or nullopt for ops a replay does not have
  // (allocations, migrations that happen inside GPU work, ...).
  std::optional<uint32_t> find(const dvdg::Op& op) const;

 private:
  std::map<std::pair<OpKind, int64_t>, uint32_t> index_;
};

}  // namespace apptracer::whatif
