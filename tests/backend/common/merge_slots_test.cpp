// The merged-results layout both real backends use: slots laid out in order, each rank
// fills its own entries, and a sum of the ranks' buffers (what the all-reduce computes)
// reads back every rank's values from the slot that holds them.
#include "backend/common/merge_slots.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace pipetwin {
namespace {

using ::testing::ElementsAre;

TEST(MergeSlots, SlotsFollowEachOtherInTheOrderAdded) {
  SlotLayout layout;
  const Slot starts = layout.add(4), ends = layout.add(4), losses = layout.add(2);
  EXPECT_EQ(starts.offset, 0);
  EXPECT_EQ(ends.offset, 4);
  EXPECT_EQ(losses.offset, 8);
  EXPECT_EQ(layout.size(), 10);
  EXPECT_EQ(layout.zeros<double>().size(), 10u);
}

TEST(MergeSlots, ASumOfDisjointlyFilledBuffersMergesTheRanks) {
  SlotLayout layout;
  const Slot times = layout.add(4), peaks = layout.add(2);
  std::vector<std::vector<double>> ranks(2, layout.zeros<double>());
  for (int rank = 0; rank < 2; ++rank) {
    for (int i = rank; i < 4; i += 2) times.in(ranks[rank], i) = 10 * i + rank;  // owned ops
    peaks.in(ranks[rank], rank) = 100 + rank;
  }
  std::vector<double> merged = layout.zeros<double>();
  for (const auto& buffer : ranks) {
    for (size_t k = 0; k < merged.size(); ++k) merged[k] += buffer[k];
  }
  EXPECT_THAT(times.read(merged), ElementsAre(0, 11, 20, 31));
  EXPECT_THAT(peaks.read(merged), ElementsAre(100, 101));
}

}  // namespace
}  // namespace pipetwin
