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

TEST(StepNames, AStepAnnotationIsItsNameAndItsStep) {
  StepName name = step_name("train#step_num=42,other=1#");
  EXPECT_EQ(name.family, "train");
  EXPECT_EQ(name.number, 42);
  EXPECT_TRUE(name.annotated);
  EXPECT_EQ(step_name("ProfilerStep#7").family, "ProfilerStep");
  EXPECT_EQ(step_name("ProfilerStep#7").number, 7);
}

TEST(StepNames, OnlyStepMarkersRankAsSteps) {
  EXPECT_GT(step_marker_rank(step_name("ProfilerStep#3")), step_marker_rank(step_name("step")));
  EXPECT_GT(step_marker_rank(step_name("train#step_num=3#")), step_marker_rank(step_name("Iteration 4")));
  EXPECT_GT(step_marker_rank(step_name("Iteration 4")), step_marker_rank(step_name("run_training_batch")));
  EXPECT_GT(step_marker_rank(step_name("run_training_batch")), 0);
  for (const char* other : {"epoch 3", "forward", "layer_12", "[LightningModule]Model.training_step", "train"}) {
    EXPECT_EQ(step_marker_rank(step_name(other)), 0) << other;
  }
}

}  // namespace
}  // namespace apptracer::trace
