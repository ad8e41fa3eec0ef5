#include "apptracer/enums.h"

#include <gtest/gtest.h>

namespace apptracer {
namespace {

TEST(Enums, NamesComeFromTheSharedList) {
  EXPECT_EQ(to_string(AllocKind::WriteCombinedHost), "write-combined host");
  EXPECT_EQ(to_string(CopyKind::HtoD), "HtoD");
  EXPECT_EQ(to_string(AccessKind::ReadWrite), "rw");
  EXPECT_EQ(to_string(static_cast<CopyKind>(99)), "?");
}

TEST(Enums, MemoryKindsFollowCuptiNumbering) {
  // Activity records are mapped by value: these must equal CUpti_ActivityMemoryKind.
  EXPECT_EQ(static_cast<int>(MemoryKind::Pageable), 1);
  EXPECT_EQ(static_cast<int>(MemoryKind::Pinned), 2);
  EXPECT_EQ(static_cast<int>(MemoryKind::Device), 3);
  EXPECT_EQ(static_cast<int>(MemoryKind::Managed), 5);
}

TEST(Enums, AllocationKindsMapToCopyEndpointKinds) {
  EXPECT_EQ(memory_kind_of(AllocKind::Device), MemoryKind::Device);
  EXPECT_EQ(memory_kind_of(AllocKind::MappedHost), MemoryKind::Pinned);
  EXPECT_EQ(memory_kind_of(AllocKind::Managed), MemoryKind::Managed);
  EXPECT_EQ(memory_kind_of(AllocKind::PageableHost), MemoryKind::Pageable);
  EXPECT_TRUE(is_device_memory(MemoryKind::Device));
  EXPECT_FALSE(is_device_memory(MemoryKind::Managed));
}

}  // namespace
}  // namespace apptracer
