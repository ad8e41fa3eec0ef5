#include "apptracer/saturating.h"

#include <gtest/gtest.h>

#include <cmath>

namespace apptracer {
namespace {

TEST(Saturating, SumsAndDifferencesStopAtTheEndsOfInt64) {
  EXPECT_EQ(saturating_add(kInt64Max, 1), kInt64Max);
  EXPECT_EQ(saturating_add(kInt64Min, -1), kInt64Min);
  EXPECT_EQ(saturating_add(kInt64Max, kInt64Min), -1);
  EXPECT_EQ(saturating_sub(kInt64Max, kInt64Min), kInt64Max);
  EXPECT_EQ(saturating_sub(kInt64Min, kInt64Max), kInt64Min);
  EXPECT_EQ(saturating_sub(0, kInt64Min), kInt64Max);
  EXPECT_EQ(saturating_sub(-1, kInt64Min), kInt64Max);
  EXPECT_EQ(saturating_add(40, 2), 42);
  EXPECT_EQ(saturating_sub(40, 42), -2);
}

TEST(Saturating, ElapsedTimeIsNeverNegative) {
  EXPECT_EQ(elapsed_ns(100, 350), 250);
  EXPECT_EQ(elapsed_ns(350, 100), 0);  // an end before its start
  EXPECT_EQ(elapsed_ns(kInt64Min, kInt64Max), kInt64Max);
  EXPECT_EQ(elapsed_ns(kInt64Max, kInt64Min), 0);
}

TEST(Saturating, RoundingKeepsDoublesInsideInt64) {
  EXPECT_EQ(saturating_round(2.5), 3);
  EXPECT_EQ(saturating_round(-2.4), -2);
  EXPECT_EQ(saturating_round(1e30), kInt64Max);
  EXPECT_EQ(saturating_round(-1e30), kInt64Min);
  EXPECT_EQ(saturating_round(INFINITY), kInt64Max);
  EXPECT_EQ(saturating_round(NAN), 0);
}

TEST(Saturating, CheckedAdditionSaysWhenItDoesNotFit) {
  EXPECT_EQ(checked_add(kInt64Max - 1, 1), kInt64Max);
  EXPECT_FALSE(checked_add(kInt64Max, 1));
  EXPECT_FALSE(checked_add(kInt64Min, -1));
}

}  // namespace
}  // namespace apptracer
