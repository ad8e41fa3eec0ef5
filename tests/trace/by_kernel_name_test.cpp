#include "analyzer/trace/by_kernel_name.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace apptracer::trace {
namespace {

TEST(ByKernelName, OneTotalPerNameWhereverEachIsStored) {
  // Two copies of one name (as two traces' texts, or a text and a literal)
  // and a name that is a prefix of it, stored inside it.
  std::string first = "void gemm<float, 128>(float const*)";
  std::string second = first;
  std::string_view prefix = std::string_view(first).substr(0, 10);
  ByKernelName<int> counts;
  for (int i = 0; i < 3; ++i) ++counts[first];
  ++counts[second];
  ++counts[prefix];
  ++counts[first];
  std::vector<std::pair<std::string_view, int>> listed(counts.begin(), counts.end());
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0], std::make_pair(prefix, 1));
  EXPECT_EQ(listed[1].first, first);
  EXPECT_EQ(listed[1].second, 5);
}

TEST(ByKernelName, ListsNamesInTheirOrder) {
  std::vector<std::string> names = {"zeta", "alpha", "mid", "alpha"};
  ByKernelName<int> counts;
  for (const std::string& name : names) ++counts[name];
  std::vector<std::string_view> listed;
  for (const auto& [name, count] : counts) listed.push_back(name);
  EXPECT_EQ(listed, (std::vector<std::string_view>{"alpha", "mid", "zeta"}));
  EXPECT_EQ(counts.size(), 3u);
}

}  // namespace
}  // namespace apptracer::trace
