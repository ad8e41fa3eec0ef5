// A slot as the device patch leaves it (exact/slot_layout.h) -> byte ranges
// (exact/slot_decoder.h). The slots are fabricated here; the GPU test in
// scripts/gpu_tests.sh checks the patch fills them this way.
#include "exact/slot_decoder.h"

#include <gtest/gtest.h>

#include <vector>

namespace apptracer::exact {
namespace {

PageEntry page(uint64_t address) {
  PageEntry entry{};
  entry.page = address >> kPageShift;
  return entry;
}

void mark(uint32_t* mask, uint32_t first, uint32_t count) {
  for (uint32_t g = first; g < first + count; ++g) mask[g / 32] |= 1u << (g % 32);
}

SlotHeader header() { return fresh_header(1, 16, 32); }

TEST(ExactSlotDecoder, GranulesBecomeReadWrittenAndReadThenWrittenRuns) {
  PageEntry entry = page(0x10000);
  mark(entry.read, 0, 4);   // granules 0-3 read
  mark(entry.write, 2, 4);  // granules 2-5 written
  DecodedLaunch got = decode_slot(header(), &entry, 1);
  EXPECT_EQ(got.ranges, (std::vector<ExactRange>{
                            {0x10000, 0x10040, AccessKind::Read, false},
                            {0x10040, 0x10080, AccessKind::ReadWrite, false},
                            {0x10080, 0x100c0, AccessKind::Write, false},
                        }));
  EXPECT_EQ(got.pages, 1u);
  EXPECT_FALSE(got.approximate);
}

TEST(ExactSlotDecoder, RunsJoinAcrossPagesInAnyEntryOrderAndStrideStaysApart) {
  std::vector<PageEntry> entries = {page(0x21000), page(0x20000), page(0x20000), page(0)};
  mark(entries[0].write, 0, 1);     // first granule of 0x21000
  mark(entries[1].write, 127, 1);   // last granule of 0x20000
  mark(entries[2].read, 0, 1);      // the same page listed twice: merged
  mark(entries[2].read, 2, 1);      // a strided read: granules 0 and 2, not 1
  entries[3].page = kAbandonedPage;  // lost a race: never used
  mark(entries[3].read, 0, 128);
  DecodedLaunch got = decode_slot(header(), entries.data(), entries.size());
  EXPECT_EQ(got.ranges, (std::vector<ExactRange>{
                            {0x20000, 0x20020, AccessKind::Read, false},
                            {0x20040, 0x20060, AccessKind::Read, false},
                            {0x20fe0, 0x21020, AccessKind::Write, false},
                        }));
  EXPECT_EQ(got.pages, 2u);
}

TEST(ExactSlotDecoder, AnOverflowedTableAddsItsBoundsAsApproximateRanges) {
  PageEntry entry = page(0x10000);
  mark(entry.write, 0, 1);
  SlotHeader h = header();
  h.overflow = 1;
  h.read_lo = 0x50000;
  h.read_hi = 0x58000;  // no write went past the table
  DecodedLaunch got = decode_slot(h, &entry, 1);
  EXPECT_TRUE(got.approximate);
  EXPECT_EQ(got.ranges, (std::vector<ExactRange>{
                            {0x10000, 0x10020, AccessKind::Write, false},
                            {0x50000, 0x58000, AccessKind::Read, true},
                        }));
}

}  // namespace
}  // namespace apptracer::exact
