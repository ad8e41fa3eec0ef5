// Changing a link by hand: "what if this path had that bandwidth or latency?"
//
//   PATTERN=bw:GBPS,lat:US     e.g. HtoD.pinned=bw:50   PtoP=lat:1.5,bw:400
//
// PATTERN selects paths by name (link_path.h: "HtoD" every HtoD path,
// "HtoD.pinned.node0.gpu0" one). lat replaces a path's fixed cost; bw scales
// its bandwidth curve so that large copies get GBPS (smaller ones keep their
// measured fraction of it). A full path name that matches nothing adds that
// path with one bandwidth at every size, which needs both bw and lat: a
// link the machine does not have (a faster interconnect, a peer path).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/model/system_model.h"

namespace apptracer::model {

struct LinkOverride {
  std::string pattern;
  std::optional<double> bandwidth_gbps;
  std::optional<double> latency_ns;
};

// Throws std::invalid_argument with a one-line message on a bad spec.
LinkOverride parse_link_override(const std::string& text);

// Applies the override; returns the names of the paths it changed or added.
// Throws std::invalid_argument when it selects nothing and adds nothing.
std::vector<std::string> apply_link_override(SystemModel& system, const LinkOverride& change);

}  // namespace apptracer::model
