// A simulation's metrics read from its Program, times and memory curve equal those of its
// timeline, span by span, on random scenarios of every kind and with every collective lane,
// so that a run that builds no timeline (`simulate --json`, sweeps) reports the same numbers.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "analysis/metrics.h"
#include "random_setup.h"
#include "random_trials.h"
#include "sim/driver/build_program.h"
#include "sim/driver/simulate.h"

namespace pipetwin {
namespace {

void expect_same_metrics(const RunMetrics& a, const RunMetrics& b) {
  EXPECT_EQ(a.makespan_s, b.makespan_s);
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_EQ(a.throughput_samples_per_s, b.throughput_samples_per_s);
  EXPECT_EQ(a.bubble_ratio, b.bubble_ratio);
  EXPECT_EQ(a.comm_s, b.comm_s);
  EXPECT_EQ(a.exposed_comm_s, b.exposed_comm_s);
  EXPECT_EQ(a.collective_s, b.collective_s);
  EXPECT_EQ(a.exposed_collective_s, b.exposed_collective_s);
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (size_t d = 0; d < a.devices.size(); ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    EXPECT_EQ(a.devices[d].id, b.devices[d].id);
    EXPECT_EQ(a.devices[d].name, b.devices[d].name);
    EXPECT_EQ(a.devices[d].busy_s, b.devices[d].busy_s);
    EXPECT_EQ(a.devices[d].peak_memory_bytes, b.devices[d].peak_memory_bytes);
    EXPECT_EQ(a.devices[d].comm_s, b.devices[d].comm_s);
    EXPECT_EQ(a.devices[d].exposed_comm_s, b.devices[d].exposed_comm_s);
    EXPECT_EQ(a.devices[d].overlap_ratio, b.devices[d].overlap_ratio);
    EXPECT_EQ(a.devices[d].collective_s, b.devices[d].collective_s);
    EXPECT_EQ(a.devices[d].exposed_collective_s, b.devices[d].exposed_collective_s);
  }
}

TEST(ProgramMetrics, EqualTheTimelinesMetricsOnRandomScenarios) {
  std::mt19937 rng(4242);
  const proto::ScheduleKind kinds[] = {proto::GPIPE, proto::ONE_F_ONE_B,
                                       proto::INTERLEAVED_ONE_F_ONE_B, proto::ZB_H1,
                                       proto::PIPEDREAM_ASYNC};
  for (int trial = 0; trial < testing::random_trials(20); ++trial) {
    ResolvedScenario setup = testing::random_setup(rng, kinds[trial % 5]);
    if (!is_asynchronous(setup.schedule.kind)) setup.training.zero_stage = trial % 4;
    SCOPED_TRACE("trial " + std::to_string(trial));
    SimulationOptions with_timeline;
    with_timeline.allow_oom = true;
    SimulationOptions without = with_timeline;
    without.timeline = false;
    const SimulationResult full = simulate_program(setup, build_program(setup), with_timeline);
    const SimulationResult bare = simulate_program(setup, build_program(setup), without);
    EXPECT_TRUE(bare.timeline.spans.empty());
    EXPECT_TRUE(bare.timeline.counters.empty());
    ASSERT_FALSE(full.timeline.spans.empty());
    const int32_t iterations = setup.training.iterations;
    const int64_t batch = setup.training.global_batch;
    expect_same_metrics(compute_metrics(bare, iterations, batch),
                        compute_metrics(full.timeline, iterations, batch));
    expect_same_metrics(compute_metrics(full, iterations, batch),
                        compute_metrics(full.timeline, iterations, batch));
  }
}

}  // namespace
}  // namespace pipetwin
