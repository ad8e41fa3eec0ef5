// The sanitizer-only run's allocations come from the sanitizer's resource
// callbacks: which of them are the program's allocations, and of what kind.
#include <gtest/gtest.h>
#include <sanitizer_callbacks.h>

#include "exact/resource_allocations.h"

namespace apptracer::exact {
namespace {

TEST(ExactResourceAllocations, MemoryIsKindedByItsFlagsAndCallback) {
  EXPECT_EQ(allocation_kind(SANITIZER_MEMORY_FLAG_NONE, MemoryOrigin::Device), AllocKind::Device);
  EXPECT_EQ(allocation_kind(SANITIZER_MEMORY_FLAG_NONE, MemoryOrigin::StreamOrdered), AllocKind::Pool);
  EXPECT_EQ(allocation_kind(SANITIZER_MEMORY_FLAG_NONE, MemoryOrigin::PinnedHost), AllocKind::PinnedHost);
  EXPECT_EQ(allocation_kind(SANITIZER_MEMORY_FLAG_MANAGED, MemoryOrigin::Device), AllocKind::Managed);
  EXPECT_EQ(allocation_kind(SANITIZER_MEMORY_FLAG_HOST_MAPPED, MemoryOrigin::PinnedHost), AllocKind::MappedHost);
  EXPECT_EQ(allocation_kind(SANITIZER_MEMORY_FLAG_MODULE, MemoryOrigin::Device), std::nullopt);
}

// Enabling peer access reports GPU 1's allocations again in GPU 0's context,
// at the same addresses: recorded as allocations, they ended GPU 1's own in
// the registry and matched nothing of the normal run, so a kernel's stores
// into GPU 1 over peer access resolved to no allocation.
TEST(ExactResourceAllocations, APeerMappingIsNoAllocationOfItsOwn) {
  EXPECT_TRUE(is_peer_mapping(SANITIZER_MEMORY_FLAG_PEER));
  EXPECT_TRUE(is_peer_mapping(SANITIZER_MEMORY_FLAG_PEER | SANITIZER_MEMORY_FLAG_PEER_ATOMIC));
  EXPECT_FALSE(is_peer_mapping(SANITIZER_MEMORY_FLAG_NONE));
  EXPECT_EQ(allocation_kind(SANITIZER_MEMORY_FLAG_PEER, MemoryOrigin::Device), std::nullopt);
  EXPECT_EQ(allocation_kind(SANITIZER_MEMORY_FLAG_PEER | SANITIZER_MEMORY_FLAG_PEER_ATOMIC, MemoryOrigin::Device),
            std::nullopt);
}

}  // namespace
}  // namespace apptracer::exact
