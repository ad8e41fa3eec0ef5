// Step ranges named alike or numbered: one family, and the number when given.
#include <gtest/gtest.h>

#include "analyzer/trace/step_names.h"

namespace apptracer::trace {
namespace {

TEST(StepNames, ANumberedNameIsItsFamilyAndItsStep) {
  EXPECT_EQ(step_name("step 5").family, "step");
  EXPECT_EQ(step_name("step 5").number, 5);
  EXPECT_EQ(step_name("iteration_12").family, "iteration");
  EXPECT_EQ(step_name("iteration_12").number, 12);
  EXPECT_EQ(step_name("epoch3").family, "epoch");
  EXPECT_EQ(step_name("epoch3").number, 3);
}

TEST(StepNames, OtherNamesAreTheirOwnFamily) {
  for (const char* name : {"step", "forward", "42", " 7", "", "step 1234567890123456789"}) {
    EXPECT_EQ(step_name(name).family, name) << name;
    EXPECT_FALSE(step_name(name).number) << name;
  }
}

}  // namespace
}  // namespace apptracer::trace
