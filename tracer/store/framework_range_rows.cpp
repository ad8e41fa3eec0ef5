#include "store/framework_range_rows.h"

namespace apptracer {

FrameworkRangeRow framework_range_row(const Record& r) {
  const FrameworkRangeRecord& f = r.framework_range;
  FrameworkRangeRow row;
  row.kind = f.kind;
  if (f.name_id != 0) row.name_id = f.name_id;
  row.tid = r.tid;
  row.depth = f.depth;
  if (f.seq >= 0) row.seq = f.seq;
  row.start_ns = static_cast<int64_t>(f.start_ns);
  row.end_ns = static_cast<int64_t>(f.end_ns);
  return row;
}

}  // namespace apptracer
