// Noise control of measured runs (analysis/noise_control.h): the warm-up iterations left
// out of a timeline, and the median of repeated runs.
#include "analysis/noise_control.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace pipetwin {
namespace {

Span span(int32_t device, const std::string& name, int32_t iteration, double start, double end) {
  Span s;
  s.device = device;
  s.lane = "compute";
  s.name = name;
  s.op = "FWD";
  s.iteration = iteration;
  s.start_s = start;
  s.end_s = end;
  return s;
}

Counter memory(int32_t device, double time, double bytes) {
  Counter c;
  c.device = device;
  c.name = "memory_bytes";
  c.time_s = time;
  c.value = bytes;
  return c;
}

// Three iterations on two devices; iteration 1 starts at 10 s on device 0 while device 1
// still finishes iteration 0.
Timeline three_iterations() {
  Timeline t;
  t.source = "torch";
  t.devices = {{0, 0, "gpu0"}, {1, 0, "gpu1"}};
  t.spans = {span(0, "0F0", 0, 1, 4),   span(1, "1F0", 0, 5, 11),  span(0, "0F0", 1, 10, 13),
             span(1, "1F0", 1, 14, 20), span(0, "0F0", 2, 20, 23), span(1, "1F0", 2, 24, 30)};
  t.counters = {memory(0, 0, 100),  memory(0, 1, 150), memory(0, 4, 100), memory(0, 10, 150),
                memory(0, 13, 100), memory(1, 0, 50),  memory(1, 5, 80),  memory(1, 11, 50),
                memory(1, 14, 80),  memory(1, 20, 50)};
  Counter link;
  link.name = "utilization";
  link.link = 0;
  link.time_s = 2;
  link.value = 0.5;
  t.counters.push_back(link);
  t.links = {{0, "nic0", 1e9}};
  t.instants = {{0, "early", 3}, {0, "late", 12}};
  return t;
}

TEST(NoiseControl, DropsTheWarmupSpansRenumbersAndShifts) {
  Timeline t = three_iterations();
  drop_warmup_iterations(t, 1);
  ASSERT_EQ(t.spans.size(), 4u);
  EXPECT_EQ(t.source, "torch");
  EXPECT_EQ(t.devices.size(), 2u);
  // The first kept span (0F0 of iteration 1, at 10 s) starts at 0.
  EXPECT_EQ(t.spans[0].name, "0F0");
  EXPECT_EQ(t.spans[0].iteration, 0);
  EXPECT_DOUBLE_EQ(t.spans[0].start_s, 0);
  EXPECT_DOUBLE_EQ(t.spans[0].end_s, 3);
  EXPECT_EQ(t.spans[1].iteration, 0);
  EXPECT_DOUBLE_EQ(t.spans[1].start_s, 4);
  EXPECT_EQ(t.spans[3].iteration, 1);
  EXPECT_DOUBLE_EQ(t.spans[3].start_s, 14);
  EXPECT_DOUBLE_EQ(t.spans[3].end_s, 20);
  for (const Span& s : t.spans) EXPECT_LE(s.iteration, 1);
}

TEST(NoiseControl, CountersStartWithTheValueHeldAtTheCut) {
  Timeline t = three_iterations();
  drop_warmup_iterations(t, 1);
  std::vector<std::pair<double, double>> dev0, dev1, link;
  for (const Counter& c : t.counters) {
    if (c.link >= 0) {
      link.emplace_back(c.time_s, c.value);
    } else {
      (c.device == 0 ? dev0 : dev1).emplace_back(c.time_s, c.value);
    }
  }
  // Device 0: the sample at the cut itself (150 at 10 s) becomes the one at 0.
  const std::vector<std::pair<double, double>> want0 = {{0, 150}, {3, 100}};
  EXPECT_EQ(dev0, want0);
  // Device 1: 80 held since 5 s (its iteration 0 still running) at 0, then 50 at 1 s.
  const std::vector<std::pair<double, double>> want1 = {{0, 80}, {1, 50}, {4, 80}, {10, 50}};
  EXPECT_EQ(dev1, want1);
  // A link counter is a series of its own.
  const std::vector<std::pair<double, double>> want_link = {{0, 0.5}};
  EXPECT_EQ(link, want_link);
  ASSERT_EQ(t.instants.size(), 1u);
  EXPECT_EQ(t.instants[0].name, "late");
  EXPECT_DOUBLE_EQ(t.instants[0].time_s, 2);
}

TEST(NoiseControl, NoWarmupChangesNothing) {
  Timeline t = three_iterations();
  drop_warmup_iterations(t, 0);
  const Timeline original = three_iterations();
  ASSERT_EQ(t.spans.size(), original.spans.size());
  for (size_t k = 0; k < t.spans.size(); ++k) {
    EXPECT_EQ(t.spans[k].iteration, original.spans[k].iteration);
    EXPECT_EQ(t.spans[k].start_s, original.spans[k].start_s);
  }
  EXPECT_EQ(t.counters.size(), original.counters.size());
  EXPECT_EQ(t.instants.size(), original.instants.size());
}

TEST(NoiseControl, TwoWarmupIterationsLeaveTheLast) {
  Timeline t = three_iterations();
  drop_warmup_iterations(t, 2);
  ASSERT_EQ(t.spans.size(), 2u);
  EXPECT_DOUBLE_EQ(t.spans[0].start_s, 0);
  EXPECT_DOUBLE_EQ(t.spans[1].start_s, 4);
  EXPECT_EQ(t.spans[1].iteration, 0);
}

TEST(NoiseControl, NothingLeftLeavesAnEmptyTimeline) {
  Timeline t = three_iterations();
  drop_warmup_iterations(t, 3);
  EXPECT_TRUE(t.spans.empty());
  EXPECT_TRUE(t.counters.empty());
  EXPECT_TRUE(t.instants.empty());
  EXPECT_EQ(t.devices.size(), 2u);
}

TEST(NoiseControl, TheMedianRunOfAnOddCount) {
  const RepeatSummary s = summarize_repeats({3.0, 1.0, 2.0});
  EXPECT_EQ(s.median_run, 2u);
  EXPECT_DOUBLE_EQ(s.median_s, 2.0);
  EXPECT_DOUBLE_EQ(s.min_s, 1.0);
  EXPECT_DOUBLE_EQ(s.max_s, 3.0);
  EXPECT_DOUBLE_EQ(s.p25_s, 1.5);
  EXPECT_DOUBLE_EQ(s.p75_s, 2.5);
  EXPECT_DOUBLE_EQ(s.spread(), 1.0);
  EXPECT_EQ(s.makespans_s, (std::vector<double>{3.0, 1.0, 2.0}));
}

TEST(NoiseControl, TheLowerMedianRunOfAnEvenCount) {
  const RepeatSummary s = summarize_repeats({4.0, 1.0, 3.0, 2.0});
  EXPECT_EQ(s.median_run, 3u);  // 2.0, not the mean of 2 and 3
  EXPECT_DOUBLE_EQ(s.median_s, 2.0);
  EXPECT_DOUBLE_EQ(s.p25_s, 1.75);
  EXPECT_DOUBLE_EQ(s.p75_s, 3.25);
  const RepeatSummary one = summarize_repeats({5.0});
  EXPECT_EQ(one.median_run, 0u);
  EXPECT_DOUBLE_EQ(one.p25_s, 5.0);
  EXPECT_DOUBLE_EQ(one.spread(), 0.0);
  EXPECT_THROW(summarize_repeats({}), std::invalid_argument);
}

}  // namespace
}  // namespace pipetwin
