// Two traces of one program compared: the tables `apptracer diff` prints and
// `apptracer report --compare` shows, declared once here.
#pragma once

#include <string>
#include <vector>

#include "analyzer/table/table.h"

namespace apptracer::diff {

struct ComparisonOptions {
  std::string step;  // the NVTX range family of a step; "" to choose one
  bool dvdg = true;  // compare the data-flow graphs too
};

struct TraceComparison {
  // What was compared and how, one line each: the step range chosen, how
  // devices were matched.
  std::vector<std::string> notes;
  // In order: "operations", "nvtx_ranges", "steps" (when a step range is
  // known), "dvdg" (unless left out). Each is B minus A, largest change first.
  std::vector<Table> tables;
};

// Opens both traces read-only; a trace that cannot be read throws a
// TraceError naming it.
TraceComparison compare_traces(const std::string& a, const std::string& b,
                               const ComparisonOptions& options);

}  // namespace apptracer::diff
