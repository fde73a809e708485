// Suggestions for typos: the nearest name within a third of the typo's length, case
// aside; nothing when no name is near or two are equally near.
#include "sim/scenario/did_you_mean.h"

#include <gtest/gtest.h>

namespace pipetwin {
namespace {

const std::vector<std::string> kFields = {"global_batch", "microbatches", "iterations", "optimizer",
                                          "data_parallel"};

TEST(DidYouMean, TheNearestNameWithinReach) {
  EXPECT_EQ(nearest_name("microbatch", kFields), "microbatches");
  EXPECT_EQ(nearest_name("iteratons", kFields), "iterations");
  EXPECT_EQ(nearest_name("Optimiser", kFields), "optimizer");
  EXPECT_EQ(did_you_mean("microbatch", kFields), "; did you mean 'microbatches'?");
}

TEST(DidYouMean, CaseAloneIsNoDistance) {
  EXPECT_EQ(nearest_name("gpipe", {"GPIPE", "UMPIPE", "PIPEFB"}), "GPIPE");
}

TEST(DidYouMean, NothingWhenNoNameIsNearOrTwoAreEquallyNear) {
  EXPECT_EQ(nearest_name("stages", kFields), "");
  EXPECT_EQ(did_you_mean("1F1B", {"GPIPE", "ONE_F_ONE_B"}), "");
  EXPECT_EQ(nearest_name("ab", {"ax", "ay"}), "");
  EXPECT_EQ(nearest_name("x", {}), "");
}

}  // namespace
}  // namespace pipetwin
