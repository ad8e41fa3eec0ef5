#include "analyzer/dvdg/strided_pointers.h"

#include <algorithm>

#include "apptracer/saturating.h"

namespace apptracer::dvdg {

namespace {

// The access reaches `bytes` from its begin, no further than `end`.
void reach(Access& access, int64_t end, int64_t bytes) {
  access.end = std::min(end, saturating_add(access.begin, bytes));
}

int64_t magnitude(int64_t step) { return step < 0 ? saturating_sub(0, step) : step; }

}  // namespace

void StridedPointers::see(int64_t name_id, uint32_t param_offset, int64_t alloc_id, int64_t offset,
                          size_t access_index, std::vector<Access>& accesses) {
  Run& run = runs_[Key{name_id, alloc_id, param_offset}];
  Access& access = accesses[access_index];
  int64_t end = access.end;
  int64_t step = saturating_sub(offset, run.last_offset);
  bool forward = step > 0;
  if (run.length >= 2 && step != 0 && forward == (run.step > 0)) {
    ++run.length;
    run.uneven |= step != run.step;
    if (run.length == 3) {
      // The run shows: its first two launches reach as far as it says.
      reach(accesses[run.first], run.first_end, magnitude(run.step));
      reach(accesses[run.last], run.last_end, magnitude(forward ? step : run.step));
    } else if (forward) {
      reach(accesses[run.last], run.last_end, step);
    }
    if (!forward || !run.uneven) reach(access, end, magnitude(step));
  } else if (run.length >= 1 && step != 0) {
    // The previous launch and this one may start a run.
    run.first = run.last;
    run.first_end = run.last_end;
    run.length = 2;
    run.uneven = false;
  } else {
    run.length = 1;
  }
  run.step = step;
  run.last_offset = offset;
  run.last = access_index;
  run.last_end = end;
}

}  // namespace apptracer::dvdg
