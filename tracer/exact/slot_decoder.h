// A slot read back from the GPU -> the launch's byte ranges: each page's
// granule masks become runs of read, written and read-then-written granules,
// joined across pages, at 32-byte granularity. Pure: the CPU tests feed it
// slots fabricated as the device patch fills them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "apptracer/enums.h"
#include "exact/slot_layout.h"

namespace apptracer::exact {

struct ExactRange {
  uint64_t lo = 0;
  uint64_t hi = 0;  // one past the last byte
  AccessKind access = AccessKind::Read;
  bool approximate = false;  // a bound of accesses the table had no room for

  bool operator==(const ExactRange& other) const {
    return lo == other.lo && hi == other.hi && access == other.access &&
           approximate == other.approximate;
  }
};

struct DecodedLaunch {
  // Exact ranges by address (no two of one kind touch), then the bounds of
  // an overflowed table, if any.
  std::vector<ExactRange> ranges;
  uint32_t pages = 0;        // distinct pages the table holds
  bool approximate = false;  // the table overflowed
};

// `entries` are the slot's first `count` entries (count already limited to
// the capacity); abandoned ones are skipped, a page listed twice is merged.
DecodedLaunch decode_slot(const SlotHeader& header, const PageEntry* entries, size_t count);

}  // namespace apptracer::exact
