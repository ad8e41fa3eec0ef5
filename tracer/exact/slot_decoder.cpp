#include "exact/slot_decoder.h"

#include <algorithm>
#include <array>

namespace apptracer::exact {

namespace {

// Granule classes: bit 0 read, bit 1 written (index into Runs).
constexpr AccessKind kClassAccess[4] = {AccessKind::Unknown, AccessKind::Read, AccessKind::Write,
                                        AccessKind::ReadWrite};

// The open run of each class: granules arrive in address order, so a run
// grows while its next granule follows it and is emitted when one does not.
class Runs {
 public:
  explicit Runs(std::vector<ExactRange>& out) : out_(out) {}

  void add(int granule_class, uint64_t address) {
    ExactRange& run = open_[granule_class];
    if (run.hi == address && run.hi != 0) {
      run.hi += kGranuleBytes;
      return;
    }
    close(granule_class);
    run = ExactRange{address, address + kGranuleBytes, kClassAccess[granule_class], false};
  }

  void close_all() {
    for (int c = 1; c < 4; ++c) close(c);
  }

 private:
  void close(int granule_class) {
    ExactRange& run = open_[granule_class];
    if (run.hi != 0) out_.push_back(run);
    run = ExactRange{};
  }

  std::vector<ExactRange>& out_;
  std::array<ExactRange, 4> open_{};
};

bool bit(const uint32_t* words, uint32_t granule) {
  return (words[granule / 32] >> (granule % 32)) & 1u;
}

}  // namespace

DecodedLaunch decode_slot(const SlotHeader& header, const PageEntry* entries, size_t count) {
  std::vector<PageEntry> pages;
  pages.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (entries[i].page != kAbandonedPage) pages.push_back(entries[i]);
  }
  std::sort(pages.begin(), pages.end(),
            [](const PageEntry& a, const PageEntry& b) { return a.page < b.page; });
  // One entry per page (the device never makes two; a merge costs nothing).
  size_t kept = 0;
  for (const PageEntry& entry : pages) {
    if (kept > 0 && pages[kept - 1].page == entry.page) {
      for (uint32_t w = 0; w < kMaskWords; ++w) {
        pages[kept - 1].read[w] |= entry.read[w];
        pages[kept - 1].write[w] |= entry.write[w];
      }
    } else {
      pages[kept++] = entry;
    }
  }
  pages.resize(kept);

  DecodedLaunch out;
  out.pages = static_cast<uint32_t>(pages.size());
  Runs runs(out.ranges);
  for (const PageEntry& entry : pages) {
    uint64_t base = entry.page << kPageShift;
    for (uint32_t g = 0; g < kGranulesPerPage; ++g) {
      int granule_class = (bit(entry.read, g) ? 1 : 0) | (bit(entry.write, g) ? 2 : 0);
      if (granule_class != 0) runs.add(granule_class, base + g * kGranuleBytes);
    }
  }
  runs.close_all();
  std::sort(out.ranges.begin(), out.ranges.end(), [](const ExactRange& a, const ExactRange& b) {
    return a.lo != b.lo ? a.lo < b.lo : a.access < b.access;
  });
  if (header.overflow) {
    out.approximate = true;
    if (header.read_lo < header.read_hi) {
      out.ranges.push_back({header.read_lo, header.read_hi, AccessKind::Read, true});
    }
    if (header.write_lo < header.write_hi) {
      out.ranges.push_back({header.write_lo, header.write_hi, AccessKind::Write, true});
    }
  }
  return out;
}

}  // namespace apptracer::exact
