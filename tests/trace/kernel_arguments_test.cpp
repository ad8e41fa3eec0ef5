// A launch's parameter words: held once per argument set however many
// launches share it, and read from the kernel_args table of traces from
// before sets (schema 2).
#include <gtest/gtest.h>

#include "analyzer/trace/trace.h"
#include "trace_builder.h"

namespace apptracer::trace {
namespace {

TEST(KernelArguments, LaunchesSharingASetShareItsWords) {
  testing::TraceBuilder builder;
  int64_t first = builder.add(testing::KernelRow());
  for (int64_t offset : {8, 0}) {
    testing::KernelArgRow word;
    word.kernel_id = first;
    word.offset = offset;
    word.alloc_id = 3;
    word.alloc_offset = offset * 2;
    word.access = AccessKind::Read;
    builder.add(word);
  }
  testing::KernelRow same;
  same.arg_set_id = 1;
  int64_t second = builder.add(same);
  builder.add(testing::KernelRow());  // arguments not captured

  Trace trace(builder.db());
  const Rows<KernelRow>& kernels = trace.rows<KernelRow>();
  const KernelArguments& arguments = trace.kernel_arguments();
  ASSERT_EQ(kernels.size(), 3u);
  ASSERT_EQ(kernels[1].id, second);
  for (int k : {0, 1}) {
    EXPECT_TRUE(arguments.captured(kernels[k]));
    KernelArguments::Words words = arguments.of(kernels[k]);
    ASSERT_EQ(words.size(), 2u);
    EXPECT_EQ(words.begin()->offset, 0u);  // by offset
    EXPECT_EQ(words.begin()[1].alloc_offset, 16);
    EXPECT_EQ(words.begin()[1].alloc_id, 3);
    EXPECT_EQ(words.begin()[1].access, AccessKind::Read);
  }
  EXPECT_FALSE(arguments.captured(kernels[2]));
  EXPECT_EQ(arguments.of(kernels[2]).size(), 0u);
  // Read when asked, the same words.
  KernelWordLookup lookup(trace);
  std::vector<KernelWord> second_words = lookup.of(kernels[1]);
  ASSERT_EQ(second_words.size(), 2u);
  EXPECT_EQ(second_words[0].offset, 0u);  // by offset, though stored after the word at 8
  EXPECT_EQ(second_words[1].alloc_offset, 16);
  EXPECT_TRUE(lookup.of(kernels[2]).empty());
}

TEST(KernelArguments, BeforeSetsEachLaunchHasItsOwnWords) {
  Database db(std::string(APPTRACER_SCHEMA2_TRACES) + "/vector_add.db", Database::Mode::ReadOnly);
  Statement count = db.prepare("SELECT count(*), count(DISTINCT kernel_id) FROM kernel_args");
  ASSERT_TRUE(count.step());
  Trace trace(db);
  size_t words = 0, launches = 0;
  for (const Packed<KernelRow>& kernel : trace.rows<KernelRow>()) {
    words += trace.kernel_arguments().of(kernel).size();
    launches += trace.kernel_arguments().captured(kernel);
  }
  EXPECT_GT(words, 0u);
  EXPECT_EQ(words, static_cast<size_t>(count.int64(0)));
  EXPECT_EQ(launches, static_cast<size_t>(count.int64(1)));
  KernelWordLookup lookup(trace);
  size_t looked_up = 0;
  for (const Packed<KernelRow>& kernel : trace.rows<KernelRow>()) looked_up += lookup.of(kernel).size();
  EXPECT_EQ(looked_up, words);
}

}  // namespace
}  // namespace apptracer::trace
