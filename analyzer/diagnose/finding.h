// A diagnosis: something the program does that costs time or memory (or is wrong),
// where it happens, what it costs now, what fixing it would save, and how.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/table/table.h"

namespace apptracer::diagnose {

// A trace row a finding is about: (table, id), e.g. ("memcpys", 12).
struct Evidence {
  std::string table;
  int64_t row = 0;
};

struct Finding {
  std::string rule;   // the rule's name (rules.h), e.g. "pageable_copy"
  std::string what;   // one line: what happens
  // Where: the rows, the kernels or copies by name, the innermost NVTX range
  // the first of them was issued in, and the host call that issued it.
  std::vector<Evidence> rows;
  std::vector<std::string> names;
  std::string nvtx;       // empty: issued outside any NVTX range
  std::string call_site;  // "cudaMemcpy (thread 4242)"; empty when no host call is known
  // The framework module and op that call was made in ("module layer1.0
  // (backward), op aten::add_"); empty where the trace records neither.
  std::string framework;
  int64_t cost_ns = 0;    // time it costs now (0: a correctness finding)
  std::optional<int64_t> saving_ns;  // estimated saving; nullopt: the model cannot say
  // Memory findings: bytes fixing it takes off its device's peak in use.
  std::optional<int64_t> saving_bytes;
  std::string estimate;   // how the saving was estimated, or why it could not be
  std::string fix;        // one line
  bool correctness = false;  // wrong results rather than lost time: no saving
  // What it claims besides its rows, e.g. "GPU idle time": findings with the
  // same claim (or a row in common) count the same time, so their savings
  // do not add up.
  std::string claim;
  int64_t occurrences = 1;  // how often it happens at its site (site_groups.h)
  // How many separate times it happened, where its rule counts them (a GPU
  // idle gap, a synchronization, a blocking or pageable copy); 0: not counted.
  int64_t events = 0;
  std::vector<size_t> overlaps;  // positions of the findings it overlaps (ranked_findings.h)
  // The steps its cost and saving are over (the steady steps diagnosed), for
  // the saving per step; 0: not a step's.
  int64_t steps = 0;
  // About start-up, which the run pays once before its steady steps: listed
  // after every finding about the steps.
  bool startup = false;
  // Issued while a framework's compiler ran (XLA compiling and autotuning:
  // its trial launches, copies and scratch buffers, on worker threads of its
  // own): the compiler's work, paid once per compile, so listed as
  // start-up's even in a run without steps.
  bool while_compiling = false;
  // About the steps, and saves (or, where the saving is unknown, costs) less
  // per step than the steps' own time varies (Thresholds::min_step_share of
  // the median step): listed last, shown only when every finding is.
  bool minor = false;
  // What it is made of, as a table inside it (a launch-bound step's kernels
  // by launches): kernel names whole here, shortened where shown to people.
  Table details;
};

}  // namespace apptracer::diagnose
