// Queries on a PyTorch training trace (the one bundled in examples/ until
// it was recorded again, kept in tests/data/schema4: a trace of an older
// tracer still answers), whose foreach optimizer kernels (pointer
// arrays over up to 34 tensors each) have access sets: their answers are the
// ones the graph gave before it held sets (tests/dvdg/expected/, written by
// the analyzer of then).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "command_runner.h"

namespace apptracer::dvdg {
namespace {

const std::string kTrace = std::string(APPTRACER_SCHEMA4_TRACES) + "/pytorch_train.db";

std::string query(const std::string& arguments) {
  CommandOutput output = run_apptracer("dvdg " + kTrace + " --no-store " + arguments);
  EXPECT_EQ(output.exit_code, 0) << output.err;
  return output.out;
}

std::string expected(const std::string& name) {
  return read_file(std::string(APPTRACER_DVDG_EXPECTED_DIR) + "/pytorch_train_" + name + ".txt");
}

// A value a foreach kernel wrote (sub-allocation 5's after the first optimizer step):
// every value that kernel read is among its producers.
TEST(BundledQueries, WhyOfAValueAForeachKernelWrote) {
  EXPECT_EQ(query("--why v225"), expected("why_v225"));
}

// Values a foreach kernel read, a tensor and host memory its pointer array
// seemed to point into: that kernel is among their consumers.
TEST(BundledQueries, ConsumersOfValuesAForeachKernelRead) {
  EXPECT_EQ(query("--consumers v219"), expected("consumers_v219"));
  EXPECT_EQ(query("--consumers v634"), expected("consumers_v634"));
}

TEST(BundledQueries, LifetimeOfATensorForeachKernelsReadAndWrote) {
  EXPECT_EQ(query("--lifetime s23"), expected("lifetime_s23"));
}

// A late tensor's whole history (56,206 lines through every optimizer step),
// too long to keep: its length and FNV-1a hash.
TEST(BundledQueries, WhyOfALateTensorThroughEveryOptimizerStep) {
  std::string text = query("--why s600");
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ull;
  EXPECT_EQ(text.size(), 6657530u);
  EXPECT_EQ(hash, 0x9e338fedc7105c36ull);
}

}  // namespace
}  // namespace apptracer::dvdg
