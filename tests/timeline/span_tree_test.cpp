// SpanTree gives the same span as walking the run, for every run.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "analyzer/timeline/span_tree.h"

namespace apptracer {
namespace {

TEST(SpanTree, EveryRunsSpanIsTheWalkedOne) {
  std::mt19937_64 random(7);
  for (size_t size : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{64}, size_t{100}}) {
    std::vector<SpanTree::Span> items;
    for (size_t i = 0; i < size; ++i) {
      int64_t start = static_cast<int64_t>(random() % 1000) - 500;
      items.push_back({start, start + static_cast<int64_t>(random() % 100)});
    }
    SpanTree tree(items);
    for (size_t from = 0; from <= size; ++from) {
      for (size_t to = from; to <= size; ++to) {
        SpanTree::Span walked = SpanTree::kNone;
        for (size_t i = from; i < to; ++i) {
          walked = {std::min(walked.first, items[i].first), std::max(walked.second, items[i].second)};
        }
        ASSERT_EQ(tree.span(from, to), walked) << size << " items, run " << from << ".." << to;
      }
    }
  }
}

}  // namespace
}  // namespace apptracer
