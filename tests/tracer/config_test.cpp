#include "base/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "buffer/allocation_registry.h"

namespace apptracer {
namespace {

TEST(OutputPath, ExpandsPidHostAndPercent) {
  EXPECT_EQ(expand_output_path("t-%p-%h-100%%.db", 42, "node1"), "t-42-node1-100%.db");
  EXPECT_EQ(expand_output_path("plain.db", 1, "h"), "plain.db");
  EXPECT_EQ(expand_output_path("odd%x%", 1, "h"), "odd%x%");
}

TEST(OutputPath, NeverOverwritesWithoutForce) {
  std::string dir = ::testing::TempDir();
  std::string path = dir + "existing-" + std::to_string(getpid()) + ".db";
  std::ofstream(path) << "x";
  std::string other = unique_output_path(path, 77, false);
  EXPECT_EQ(other, dir + "existing-" + std::to_string(getpid()) + "-77.db");
  std::ofstream(other) << "x";
  EXPECT_EQ(unique_output_path(path, 77, false),
            dir + "existing-" + std::to_string(getpid()) + "-77-1.db");
  EXPECT_EQ(unique_output_path(path, 77, true), path);
  unlink(path.c_str());
  unlink(other.c_str());
}

TEST(AllocationRegistry, FindsTheAllocationLiveAtATime) {
  AllocationRegistry registry;
  uint64_t big = registry.add(0x1000, 0x1000, AllocKind::Device, 0, 10);
  registry.remove(0x1000, 20);
  uint64_t small = registry.add(0x1800, 0x10, AllocKind::Device, 0, 30);
  EXPECT_EQ(registry.find(0x1900, 15)->id, big) << "interior pointer, older lifetime";
  EXPECT_FALSE(registry.find(0x1900, 35).has_value()) << "freed by then";
  EXPECT_EQ(registry.find(0x1808, 35)->id, small);
  EXPECT_FALSE(registry.find(0x1808, 25).has_value()) << "not yet allocated";
  EXPECT_FALSE(registry.find(0x0fff, 15).has_value());
}

TEST(AllocationRegistry, ForgetsOnlyWhatWasFreedBeforeTheCutoff) {
  AllocationRegistry registry;
  registry.add(0x1000, 0x100, AllocKind::Device, 0, 10);
  registry.remove(0x1000, 20);
  registry.add(0x2000, 0x100, AllocKind::Device, 0, 30);
  registry.remove(0x2000, 40);
  registry.add(0x3000, 0x100, AllocKind::Device, 0, 50);
  registry.forget_freed_before(35);
  EXPECT_FALSE(registry.find(0x1010, 15).has_value()) << "freed at 20: forgotten";
  EXPECT_TRUE(registry.find(0x2010, 35).has_value()) << "freed at 40: kept";
  EXPECT_TRUE(registry.find(0x3010, 60).has_value()) << "live: kept";
}

TEST(AllocationRegistry, UnresolvableAllocationsAreRemovedByKey) {
  AllocationRegistry registry;
  uint64_t id = registry.add_unresolvable(AllocKind::VmmPhysical, 0xabc, 1);
  EXPECT_FALSE(registry.find(0xabc, 2).has_value());
  EXPECT_EQ(registry.remove_unresolvable(AllocKind::VmmPhysical, 0xabc), id);
  EXPECT_FALSE(registry.remove_unresolvable(AllocKind::VmmPhysical, 0xabc).has_value());
}

}  // namespace
}  // namespace apptracer
