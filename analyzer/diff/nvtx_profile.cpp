#include "analyzer/diff/nvtx_profile.h"

#include "apptracer/saturating.h"

namespace apptracer::diff {

Profile nvtx_profile(trace::Trace& trace) {
  Profile profile;
  profile.measures = {"count", "time_ns"};
  for (const auto& range : trace.rows<NvtxRangeRow>()) {
    std::vector<int64_t>& entry =
        profile.entry({"nvtx range", std::string(trace.string(range.name_id, "?")), ""});
    entry[0] = saturating_add(entry[0], 1);
    if (range.end_ns) entry[1] = saturating_add(entry[1], elapsed_ns(range.start_ns, *range.end_ns));
  }
  return profile;
}

}  // namespace apptracer::diff
