#include "buffer/address_regions.h"

#include <gtest/gtest.h>

#include <memory>

namespace apptracer {
namespace {

constexpr uint64_t kRegion = uint64_t{1} << AddressRegions::kRegionShift;

TEST(AddressRegionsTest, AnAddressBetweenTwoCoveredRegionsIsNotContained) {
  auto regions = std::make_unique<AddressRegions>();
  regions->cover(0x7f0000000000, 4096);
  regions->cover(0x7f4000000000, 1 << 20);
  EXPECT_TRUE(regions->may_contain(0x7f0000000000));
  EXPECT_TRUE(regions->may_contain(0x7f4000000000 + 100));
  EXPECT_FALSE(regions->may_contain(0x7f2000000000)) << "a span from lowest to highest held it";
  EXPECT_FALSE(regions->may_contain(0));
  EXPECT_FALSE(regions->may_contain(0x3f800000)) << "a float's bits";
}

TEST(AddressRegionsTest, AnAllocationAcrossRegionsCoversEachOfThem) {
  auto regions = std::make_unique<AddressRegions>();
  const uint64_t start = 0x500000000000 + kRegion - 16;
  regions->cover(start, 3 * kRegion);
  for (uint64_t at = start; at < start + 3 * kRegion; at += kRegion / 2) {
    EXPECT_TRUE(regions->may_contain(at)) << std::hex << at;
  }
  EXPECT_FALSE(regions->may_contain(start + 4 * kRegion));
  regions->cover(0x600000000000, 0);
  EXPECT_FALSE(regions->may_contain(0x600000000000)) << "nothing was handed out";
}

TEST(AddressRegionsTest, AddressesPastFourLevelPagingAreASpan) {
  auto regions = std::make_unique<AddressRegions>();
  const uint64_t high = uint64_t{1} << 50;
  regions->cover(high, 4096);
  EXPECT_TRUE(regions->may_contain(high + 100));
  EXPECT_FALSE(regions->may_contain(high - 1));
  regions->cover(UINT64_MAX - 10, 100);  // wraps: covered to the end
  EXPECT_TRUE(regions->may_contain(UINT64_MAX - 1));
  regions->reset();
  EXPECT_FALSE(regions->may_contain(high + 100));
}

}  // namespace
}  // namespace apptracer
