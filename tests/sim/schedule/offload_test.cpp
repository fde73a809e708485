// Activation offload and the memory model: copies that cost nothing change nothing but
// the peak; a prefetch horizon too short for the host link delays every backward by
// exactly the copy time it cannot hide; the simgrid engine in exact mode reproduces the
// analytic timestamps with offload; the command line says when a scenario fits.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "cli_runner.h"
#include "random_setup.h"
#include "random_trials.h"
#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/memory_curve.h"
#include "sim/simgrid/simgrid_executor.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

void enable_offload(ResolvedScenario& setup, double bandwidth, double latency, int horizon,
                    double fraction = 1.0) {
  setup.cluster.has_host_link = true;
  setup.cluster.host_link = {bandwidth, latency};
  setup.cluster.host_memory_bytes = 1e18;
  setup.schedule.offload.enabled = true;
  setup.schedule.offload.prefetch_horizon = horizon;
  setup.schedule.offload.fraction = fraction;
  setup.schedule.offload.stages.clear();
  for (int s = 0; s < setup.schedule.chunks(); ++s) setup.schedule.offload.stages.push_back(s);
}

double makespan(const ExecutionTimes& times) {
  return *std::max_element(times.end_s.begin(), times.end_s.end());
}

// Start times of a device's BWDs, in lane order.
std::vector<double> backward_starts(const Program& p, const ExecutionTimes& t, int device) {
  std::vector<double> starts;
  for (int32_t i = 0; i < p.size(); ++i) {
    if (p.instructions[i].op == Op::kBwd && p.instructions[i].device == device) {
      starts.push_back(t.start_s[i]);
    }
  }
  return starts;
}

class OffloadClosedForm : public ::testing::TestWithParam<proto::ScheduleKind> {};

// With copies that take no time, offload changes no timestamp, and every stage that keeps
// more than one stash (GPipe: M > 1; 1F1B and the asynchronous pipelines, which run 1F1B
// without a flush: min(K - s, M) > 1) peaks lower.
TEST_P(OffloadClosedForm, FreeCopiesKeepTheTimeAndLowerThePeak) {
  std::mt19937 rng(31);
  for (int trial = 0; trial < 50; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 8)(rng);
    const int M = std::uniform_int_distribution<int>(1, 16)(rng);
    const int h = std::uniform_int_distribution<int>(0, 4)(rng);
    ResolvedScenario setup = testing::uniform_setup(GetParam(), K, M, 1e-3, 2e-3, 1, 4, 1000);
    // Asynchronous pipelines run on from one iteration into the next: several of them.
    if (is_asynchronous(GetParam())) setup.training.iterations = 1 + trial % 3;
    const Program plain = build_program(setup);
    const ExecutionTimes plain_times = run_analytic(plain, setup.cluster);
    const MemoryCurve plain_memory = memory_curve(plain, plain_times);
    enable_offload(setup, 1e30, 0, h);
    const Program offloaded = build_program(setup);
    const ExecutionTimes times = run_analytic(offloaded, setup.cluster);
    const MemoryCurve memory = memory_curve(offloaded, times);
    SCOPED_TRACE("K=" + std::to_string(K) + " M=" + std::to_string(M) + " h=" + std::to_string(h));
    EXPECT_NEAR(makespan(times), makespan(plain_times), 1e-12);
    for (int s = 0; s < K; ++s) {
      const int kept = GetParam() == proto::GPIPE ? M : std::min(K - s, M);
      if (kept > h + 1) {
        EXPECT_LT(memory.peaks[s].bytes, plain_memory.peaks[s].bytes) << "stage " << s;
      } else {
        EXPECT_LE(memory.peaks[s].bytes, plain_memory.peaks[s].bytes) << "stage " << s;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, OffloadClosedForm,
                         ::testing::Values(proto::GPIPE, proto::ONE_F_ONE_B, proto::PIPEDREAM_ASYNC,
                                           proto::PIPEDREAM_2BW),
                         [](const auto& info) { return proto::ScheduleKind_Name(info.param); });

// One stage, GPipe, horizon 1: the RELOAD of microbatch j copies while BWD j-1 runs. A copy
// of c seconds hides behind a backward of t_b when c <= t_b; otherwise each backward
// waits exactly the missing c - t_b, so consecutive backwards start max(t_b, c) apart.
TEST(OffloadHorizon, ATooShortHorizonDelaysEachBackwardByTheMissingCopyTime) {
  const double tf = 4e-3, tb = 2e-3;
  for (const double copy : {1e-3, 2e-3, 3e-3, 3.5e-3}) {
    ResolvedScenario setup = testing::uniform_setup(proto::GPIPE, 1, 6, tf, tb, 1, 4, 1000);
    const double bytes = 4 * 1000;  // one microbatch's stash
    enable_offload(setup, bytes / copy, 0, 1);
    const Program p = build_program(setup);
    const ExecutionTimes t = run_analytic(p, setup.cluster);
    const std::vector<double> starts = backward_starts(p, t, 0);
    ASSERT_EQ(starts.size(), 6u);
    for (size_t j = 2; j < starts.size(); ++j) {
      EXPECT_NEAR(starts[j] - starts[j - 1], std::max(tb, copy), 1e-12) << "copy " << copy;
    }
  }
}

// Horizon 0 prefetches nothing: every backward after the first waits for its whole copy.
TEST(OffloadHorizon, HorizonZeroExposesEveryReload) {
  const double tb = 2e-3, copy = 1e-3;
  ResolvedScenario setup = testing::uniform_setup(proto::GPIPE, 1, 5, 4e-3, tb, 1, 4, 1000);
  enable_offload(setup, 4 * 1000 / copy, 0, 0);
  const Program p = build_program(setup);
  const ExecutionTimes t = run_analytic(p, setup.cluster);
  const std::vector<double> starts = backward_starts(p, t, 0);
  for (size_t j = 1; j < starts.size(); ++j) {
    EXPECT_NEAR(starts[j] - starts[j - 1], tb + copy, 1e-12);
  }
}

class OffloadExact : public ::testing::TestWithParam<proto::ScheduleKind> {};

// Offload copies on dedicated host links: the simgrid engine in exact mode gives the
// analytic executor's timestamps to 1e-9, on random scenarios, horizons and fractions.
TEST_P(OffloadExact, SimgridReproducesAnalyticTimestamps) {
  std::mt19937 rng(777 + GetParam());
  for (int trial = 0; trial < testing::random_trials(25); ++trial) {
    ResolvedScenario setup = testing::random_setup(rng, GetParam());
    enable_offload(setup, std::uniform_real_distribution<double>(5e9, 60e9)(rng),
                   std::uniform_real_distribution<double>(0, 5e-6)(rng),
                   std::uniform_int_distribution<int>(0, 4)(rng),
                   std::uniform_real_distribution<double>(0.1, 1.0)(rng));
    SCOPED_TRACE("trial " + std::to_string(trial));
    testing::expect_exact_simgrid_equals_analytic(setup);
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, OffloadExact,
                         ::testing::Values(proto::GPIPE, proto::ONE_F_ONE_B,
                                           proto::INTERLEAVED_ONE_F_ONE_B, proto::UMPIPE,
                                           proto::PIPEDREAM_ASYNC, proto::PIPEDREAM_2BW,
                                           proto::APAPO),
                         [](const auto& info) { return proto::ScheduleKind_Name(info.param); });

// Command line: a scenario that does not fit becomes one that fits with offload, and
// `simulate` says so; too little host memory and bad offload settings are clear errors.
const char* kTight = R"(name: "tight"
cluster {
  nodes: 1
  gpus_per_node: 2
  gpu { name: "small" peak_tflops: 100 memory_gib: 1 }
  intra_node { bandwidth_gbytes_per_s: 100 latency_us: 1 }
  host_link { bandwidth_gbytes_per_s: 10000 latency_us: 1 }
  host_memory_gib: 64
}
model {
  layers { name: "l0" fwd_ms: 4 bwd_ms: 8 activation_bytes: 1000 stash_bytes: 200000000 parameter_bytes: 0 }
  layers { name: "l1" fwd_ms: 4 bwd_ms: 8 activation_bytes: 1000 stash_bytes: 200000000 parameter_bytes: 0 }
}
training { global_batch: 8 microbatches: 8 }
schedule { kind: GPIPE stages: 2 }
)";

TEST(OffloadCli, AScenarioThatDoesNotFitFitsWithOffload) {
  const testing::TempDir dir;
  const std::string path = dir.write("tight.textproto", kTight).string();
  const testing::CliResult without = testing::run_pipetwin("simulate " + path);
  EXPECT_EQ(without.exit_code, 1);
  EXPECT_THAT(without.err, HasSubstr("runs out of memory"));
  EXPECT_THAT(without.err, HasSubstr("schedule.offload"));
  const testing::CliResult with = testing::run_pipetwin(
      "simulate " + path + " --set schedule.offload.prefetch_horizon=1 --json");
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_THAT(with.out, HasSubstr("\"peak_memory_bytes\""));
}

TEST(OffloadCli, TooLittleHostMemoryIsAnError) {
  const testing::TempDir dir;
  const std::string path = dir.write("tight.textproto", kTight).string();
  const testing::CliResult r = testing::run_pipetwin(
      "simulate " + path + " --set schedule.offload.policy=ALL --set cluster.host_memory_gib=0.5");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("node 0 runs out of host memory"));
  EXPECT_THAT(r.err, HasSubstr("cluster.host_memory_gib"));
}

TEST(OffloadCli, BadSettingsNameTheFileLineAndField) {
  const testing::TempDir dir;
  const struct {
    std::string offload, field, problem;
  } cases[] = {
      {"offload { prefetch_horizon: -1 }", "schedule.offload.prefetch_horizon",
       "must not be negative"},
      {"offload { fraction: 1.5 }", "schedule.offload.fraction", "must be in (0, 1]"},
      {"offload { policy: STAGES stages: [2] }", "schedule.offload.stages[0]", "no stage 2"},
      {"offload { policy: STAGES }", "schedule.offload", "stages: missing"},
  };
  for (const auto& c : cases) {
    std::string text = kTight;
    const std::string schedule = "schedule { kind: GPIPE stages: 2 }";
    text.replace(text.find(schedule), schedule.size(),
                 "schedule { kind: GPIPE stages: 2\n  " + c.offload + "\n}");
    const std::string path = dir.write("bad.textproto", text).string();
    const testing::CliResult r = testing::run_pipetwin("simulate " + path);
    EXPECT_EQ(r.exit_code, 2) << c.offload << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(path + ":16"));  // the offload line
    EXPECT_THAT(r.err, HasSubstr(c.field));
    EXPECT_THAT(r.err, HasSubstr(c.problem));
  }
  // Offload needs a host link to copy over.
  std::string text = kTight;
  text.erase(text.find("  host_link"), text.find("  host_memory_gib") - text.find("  host_link"));
  const std::string no_link = dir.write("nolink.textproto", text).string();
  const testing::CliResult r =
      testing::run_pipetwin("simulate " + no_link + " --set schedule.offload.policy=ALL");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("cluster.host_link, which is missing"));
}

}  // namespace
}  // namespace pipetwin
