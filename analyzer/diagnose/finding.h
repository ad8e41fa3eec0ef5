// A diagnosis: something the program does that costs time or memory (or is wrong),
// where it happens, what it costs now, what fixing it would save, and how.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
  std::vector<size_t> overlaps;  // positions of the findings it overlaps (ranked_findings.h)
};

}  // namespace apptracer::diagnose
