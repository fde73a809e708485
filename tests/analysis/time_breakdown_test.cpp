// The time breakdown per device: five parts that tile the run, consistent with the metrics.
#include "analysis/time_breakdown.h"

#include <gtest/gtest.h>

#include "analysis/intervals.h"
#include "analysis/metrics.h"
#include "report_samples.h"

namespace pipetwin {
namespace {

Span span(int32_t device, const std::string& lane, double start, double end,
          int32_t iteration = 0) {
  Span s;
  s.device = device;
  s.lane = lane;
  s.op = lane == "compute" ? "FWD" : "SEND_ACT";
  s.start_s = start;
  s.end_s = end;
  s.iteration = iteration;
  return s;
}

TEST(TimeBreakdown, SplitsOneDeviceByHand) {
  Timeline t;
  t.devices = {{0, 0, "gpu0"}, {1, 0, "gpu1"}};
  t.spans = {span(0, "compute", 0, 1), span(0, "send", 0.5, 1.5), span(0, "compute", 2, 3),
             span(1, "compute", 0, 4)};
  const std::vector<DeviceTimeBreakdown> b = time_breakdown(t);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_DOUBLE_EQ(b[0].compute_s, 1.5);            // [0, 0.5) and [2, 3)
  EXPECT_DOUBLE_EQ(b[0].overlapped_comm_s, 0.5);    // [0.5, 1)
  EXPECT_DOUBLE_EQ(b[0].exposed_comm_s, 0.5);       // [1, 1.5)
  EXPECT_DOUBLE_EQ(b[0].idle_peer_s, 0.5);          // [1.5, 2), inside the iteration
  EXPECT_DOUBLE_EQ(b[0].idle_warmup_drain_s, 1.0);  // [3, 4), after its last compute
  EXPECT_DOUBLE_EQ(b[0].total_s(), 4);
  EXPECT_DOUBLE_EQ(b[1].compute_s, 4);
}

TEST(TimeBreakdown, PartsTileTheMakespanAndAgreeWithTheMetrics) {
  const SimulationResult result = testing::simulated_quickstart();
  const Timeline& t = result.timeline;
  const RunMetrics metrics =
      compute_metrics(t, result.setup.training.iterations, result.setup.training.global_batch);
  const std::vector<DeviceTimeBreakdown> b = time_breakdown(t);
  ASSERT_EQ(b.size(), metrics.devices.size());
  double warmup_drain = 0;
  for (size_t k = 0; k < b.size(); ++k) {
    SCOPED_TRACE(b[k].name);
    EXPECT_NEAR(b[k].total_s(), metrics.makespan_s, 1e-9 * metrics.makespan_s);
    double compute_spans = 0;
    for (const Span& s : t.spans) {
      if (s.device == b[k].device && s.lane == "compute") compute_spans += s.duration_s();
    }
    EXPECT_NEAR(b[k].busy_s(), compute_spans, 1e-9 * metrics.makespan_s);
    EXPECT_NEAR(b[k].busy_s(), metrics.devices[k].busy_s, 1e-9 * metrics.makespan_s);
    EXPECT_NEAR(b[k].exposed_comm_s, metrics.devices[k].exposed_comm_s, 1e-9 * metrics.makespan_s);
    warmup_drain += b[k].idle_warmup_drain_s;
  }
  EXPECT_GT(warmup_drain, 0);  // a pipeline fills and drains
}

TEST(Intervals, UncoveredPieces) {
  const Intervals a = merged({{3, 4}, {0, 2}, {1, 2.5}});
  ASSERT_EQ(a, (Intervals{{0, 2.5}, {3, 4}}));
  EXPECT_EQ(uncovered(a, {{1, 3.5}}), (Intervals{{0, 1}, {3.5, 4}}));
  EXPECT_DOUBLE_EQ(uncovered_length(a, {}), 3.5);
}

}  // namespace
}  // namespace pipetwin
