#include "apptracer/um_counter_groups.h"

#include <gtest/gtest.h>

namespace apptracer {
namespace {

using Kinds = std::vector<UmCounterKind>;

TEST(UmCounterGroupsTest, TheDefaultLeavesMigrationBytesAndPageFaultsOut) {
  Kinds expected = {UmCounterKind::Thrashing, UmCounterKind::Throttling, UmCounterKind::RemoteMap};
  EXPECT_EQ(um_counter_kinds(""), expected);
  EXPECT_EQ(um_counter_kinds("default"), expected);
}

TEST(UmCounterGroupsTest, GroupsCombineAndRepeatsCountOnce) {
  EXPECT_EQ(um_counter_kinds("all")->size(), 8u);
  EXPECT_EQ(um_counter_kinds("off"), Kinds{});
  EXPECT_EQ(um_counter_kinds("gpu-faults,gpu-faults"), Kinds{UmCounterKind::GpuPageFault});
  Kinds with_faults = *um_counter_kinds("default,migrations,cpu-faults,gpu-faults");
  EXPECT_EQ(with_faults, *um_counter_kinds("all"));
}

TEST(UmCounterGroupsTest, AnUnknownGroupIsRefused) {
  EXPECT_FALSE(um_counter_kinds("faults").has_value());
  EXPECT_FALSE(um_counter_kinds("migrations,").has_value()) << "an empty name is not a group";
  EXPECT_NE(um_counter_group_names().find("gpu-faults"), std::string::npos);
}

}  // namespace
}  // namespace apptracer
