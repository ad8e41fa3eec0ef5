#include "analyzer/dvdg/strided_pointers.h"

#include <algorithm>

#include "apptracer/saturating.h"

namespace apptracer::dvdg {

namespace {

void reach_one_stride(Access& access, int64_t stride) {
  access.end = std::min(access.end, saturating_add(access.begin, stride));
}

}  // namespace

void StridedPointers::see(int64_t name_id, uint32_t param_offset, int64_t alloc_id, int64_t offset,
                          size_t access_index, std::vector<Access>& accesses) {
  Run& run = runs_[Key{name_id, alloc_id, param_offset}];
  int64_t step = saturating_sub(offset, run.last_offset);
  if (run.length >= 2 && step == run.stride) {
    int64_t reach = step < 0 ? saturating_sub(0, step) : step;
    if (++run.length == 3) {
      reach_one_stride(accesses[run.previous], reach);
      reach_one_stride(accesses[run.last], reach);
    }
    reach_one_stride(accesses[access_index], reach);
  } else if (run.length >= 1 && step != 0) {
    // The previous launch and this one may start a run.
    run.previous = run.last;
    run.stride = step;
    run.length = 2;
  } else {
    run.length = 1;
  }
  run.last_offset = offset;
  run.last = access_index;
}

}  // namespace apptracer::dvdg
