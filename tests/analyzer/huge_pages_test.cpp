// Large allocations ask for transparent huge pages: the mapping holding a
// vector of 16 MiB made through operator new carries the kernel's "hg"
// (huge page advised) flag; a small one's does not, and advice over less
// than one whole 2 MiB page is not given.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/huge_pages.h"

namespace apptracer {
namespace {

// The VmFlags of the mapping that holds `address`, from /proc/self/smaps.
std::string flags_of(const void* address) {
  auto wanted = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t start = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> start >> dash >> end && dash == '-') {
      inside = start <= wanted && wanted < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

bool has_flag(const std::string& flags, const std::string& flag) {
  return (flags + " ").find(" " + flag + " ") != std::string::npos;
}

TEST(HugePages, ALargeAllocationAsksForThem) {
  std::vector<char> small(64 * 1024);
  std::vector<char> large(16 << 20);
  std::string flags = flags_of(large.data() + (8 << 20));
  ASSERT_FALSE(flags.empty()) << "no mapping in /proc/self/smaps holds the vector";
  if (!has_flag(flags, "hg") && !advise_huge_pages(large.data(), large.size()))
    GTEST_SKIP() << "this kernel gives no transparent huge pages (madvise: " << errno << ")";
  EXPECT_TRUE(has_flag(flags, "hg")) << flags;
  EXPECT_FALSE(has_flag(flags_of(small.data()), "hg")) << "a small allocation is left as it is";
}

TEST(HugePages, NoAdviceOverLessThanAWholeHugePage) {
  alignas(4096) static char page[4096];
  EXPECT_FALSE(advise_huge_pages(page, sizeof page));
}

}  // namespace
}  // namespace apptracer
