// Weight-stash offload in asynchronous pipelines: exactly the stale backwards (those whose
// forward ran on weights an update has since overwritten) wait for a copy of their version
// back from host memory; copies that cost nothing change no timestamp and never raise a
// device's peak, and lower it where a stage keeps three versions or more; a slow host link
// holds the updates back; the simgrid engine reproduces the analytic timestamps; the
// scenario fields are checked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "cli_runner.h"
#include "random_setup.h"
#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/memory_curve.h"
#include "sim/schedule/weight_versions.h"
#include "sim/simgrid/simgrid_executor.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

constexpr proto::ScheduleKind kAsynchronous[] = {proto::PIPEDREAM_ASYNC, proto::PIPEDREAM_2BW,
                                                 proto::APAPO};

void offload_weight_stashes(ResolvedScenario& setup, double bandwidth, int horizon,
                            bool activations = false) {
  setup.cluster.has_host_link = true;
  setup.cluster.host_link = {bandwidth, 0};
  setup.cluster.host_memory_bytes = 1e18;
  OffloadSpec& offload = setup.schedule.offload;
  offload.enabled = true;
  offload.prefetch_horizon = horizon;
  offload.activations = activations;
  offload.weight_stashes = true;
  offload.stages.clear();
  for (int s = 0; s < setup.schedule.chunks(); ++s) offload.stages.push_back(s);
}

// K uniform stages whose layers hold `weight_bytes` of fp32 weights each.
ResolvedScenario weighted_setup(proto::ScheduleKind kind, int K, int M, int iterations,
                                int64_t weight_bytes) {
  ResolvedScenario setup = testing::uniform_setup(kind, K, M, 1e-3, 2e-3, 1, 4, 1000);
  for (ModelLayer& layer : setup.model.layers) layer.parameter_bytes = weight_bytes;
  setup.training.iterations = iterations;
  if (kind == proto::PIPEDREAM_2BW) setup.training.microbatches = std::max(M, K);
  if (kind == proto::PIPEDREAM_2BW) setup.training.global_batch = 4 * std::max(M, K);
  // APapo's default bound (0) is the synchronous limit: let microbatches run stale.
  if (kind == proto::APAPO) setup.schedule.max_staleness = M;
  return setup;
}

double makespan(const ExecutionTimes& times) {
  return *std::max_element(times.end_s.begin(), times.end_s.end());
}

// Compute ops that `i` waits for directly.
bool waits_for_op(const Program& p, int32_t i, Op op) {
  for (int32_t d : p.deps_of(i)) {
    if (p.instructions[d].op == op) return true;
  }
  return false;
}

class WeightStashOffload : public ::testing::TestWithParam<proto::ScheduleKind> {};

// The weight versions pass reads staleness off the compute lanes on its own: a BWD waits
// for a RELOAD_WEIGHTS exactly when its forward's version has been overwritten before it,
// every OFFLOAD_WEIGHTS is waited for by an OPTIM, and each is paired with one reload.
TEST_P(WeightStashOffload, ExactlyTheStaleBackwardsWaitForAReload) {
  std::mt19937 rng(41 + GetParam());
  for (int trial = 0; trial < 30; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 6)(rng);
    const int M = std::uniform_int_distribution<int>(1, 8)(rng);
    const int iterations = std::uniform_int_distribution<int>(1, 4)(rng);
    ResolvedScenario setup = weighted_setup(GetParam(), K, M, iterations, 4000);
    offload_weight_stashes(setup, 1e9, std::uniform_int_distribution<int>(0, 3)(rng));
    const Program p = build_program(setup);
    const WeightVersions versions = weight_versions(p);
    SCOPED_TRACE("K=" + std::to_string(K) + " M=" + std::to_string(M));
    // Per stage: the OPTIMs seen so far on its lane, and each forward's version.
    std::map<int32_t, int32_t> updates;
    std::map<std::tuple<int32_t, int32_t, int32_t>, int32_t> forward_version;
    int32_t stale = 0;
    for (int32_t i = 0; i < p.size(); ++i) {
      const Instruction& ins = p.instructions[i];
      if (ins.lane() != Lane::kCompute) continue;
      const auto key = std::make_tuple(ins.stage, ins.iteration, ins.microbatch);
      if (ins.op == Op::kFwd) {
        forward_version[key] = versions.forward_version[i];
      } else if (ins.op == Op::kOptim) {
        ++updates[ins.stage];
        EXPECT_EQ(waits_for_op(p, i, Op::kOffloadWeights),
                  std::any_of(p.instructions.begin(), p.instructions.end(),
                              [&](const Instruction& o) {
                                return o.op == Op::kOffloadWeights && o.stage == ins.stage &&
                                       o.microbatch == updates[ins.stage] - 1;
                              }))
            << p.describe(i);
      } else if (ins.op == Op::kBwd) {
        const bool is_stale = forward_version.at(key) < updates[ins.stage];
        stale += is_stale;
        EXPECT_EQ(waits_for_op(p, i, Op::kReloadWeights), is_stale) << p.describe(i);
      }
    }
    int32_t offloads = 0, reloads = 0;
    for (int32_t i = 0; i < p.size(); ++i) {
      const Op op = p.instructions[i].op;
      if (op == Op::kOffloadWeights) {
        ++offloads;
        EXPECT_EQ(p.instructions[i].bytes, 4000);
      }
      if (op == Op::kReloadWeights) {
        ++reloads;
        EXPECT_TRUE(waits_for_op(p, i, Op::kOffloadWeights)) << p.describe(i);
      }
    }
    EXPECT_EQ(offloads, reloads);
    EXPECT_LE(reloads, stale);
    EXPECT_EQ(stale > 0, versions.max_staleness > 0);
  }
}

// Free copies (no bandwidth limit, no latency): the same timestamps, a device peak never
// higher, and lower on a stage that kept three versions or more when the reload comes just
// in time (horizon 0: it holds one version, for the length of its backward).
TEST_P(WeightStashOffload, FreeCopiesKeepTheTimeAndNeverRaiseThePeak) {
  std::mt19937 rng(7 + GetParam());
  for (int trial = 0; trial < 30; ++trial) {
    const int K = std::uniform_int_distribution<int>(2, 6)(rng);
    const int M = std::uniform_int_distribution<int>(1, 8)(rng);
    const int h = trial % 2 == 0 ? 0 : std::uniform_int_distribution<int>(1, 3)(rng);
    ResolvedScenario setup = weighted_setup(GetParam(), K, M, 1 + trial % 3, 40000);
    const Program plain = build_program(setup);
    const ExecutionTimes plain_times = run_analytic(plain, setup.cluster);
    const MemoryCurve plain_memory = memory_curve(plain, plain_times);
    const WeightVersions versions = weight_versions(plain);
    offload_weight_stashes(setup, 1e30, h);
    const Program offloaded = build_program(setup);
    const ExecutionTimes times = run_analytic(offloaded, setup.cluster);
    const MemoryCurve memory = memory_curve(offloaded, times);
    SCOPED_TRACE("K=" + std::to_string(K) + " M=" + std::to_string(M) + " h=" + std::to_string(h));
    EXPECT_NEAR(makespan(times), makespan(plain_times), 1e-12);
    for (int s = 0; s < K; ++s) {
      EXPECT_LE(memory.peaks[s].bytes, plain_memory.peaks[s].bytes) << "stage " << s;
      if (h == 0 && versions.alive[s] >= 3) {
        EXPECT_LT(memory.peaks[s].bytes, plain_memory.peaks[s].bytes) << "stage " << s;
      }
      // Whatever was stashed went through host memory.
      if (versions.alive[s] > 1) {
        EXPECT_GE(memory.host_peaks[s].bytes, 40000) << "stage " << s;
      }
    }
  }
}

// Each update waits for the copy of the version it overwrites: once the copy of a stage's
// weights takes longer than what the stage computes between two updates, the run slows
// down, and it never speeds up.
TEST_P(WeightStashOffload, ASlowHostLinkHoldsTheUpdatesBack) {
  ResolvedScenario setup = weighted_setup(GetParam(), 4, 4, 3, 1'000'000);
  const double plain = makespan(run_analytic(build_program(setup), setup.cluster));
  double previous = plain;
  for (const double bandwidth : {1e12, 1e9, 1e8, 1e7}) {
    offload_weight_stashes(setup, bandwidth, 2);
    const double t = makespan(run_analytic(build_program(setup), setup.cluster));
    EXPECT_GE(t, previous - 1e-12) << bandwidth;
    previous = t;
  }
  EXPECT_GT(previous, plain + 0.05);  // 1 MB at 10 MB/s: 0.1 s per copy
}

// Weight and activation copies on one copy lane, on random pipelines with replicas: the
// simgrid engine in exact mode gives the analytic timestamps.
TEST_P(WeightStashOffload, SimgridReproducesAnalyticTimestamps) {
  std::mt19937 rng(99 + GetParam());
  for (int trial = 0; trial < 12; ++trial) {
    ResolvedScenario setup = testing::random_setup(rng, GetParam());
    offload_weight_stashes(setup, std::uniform_real_distribution<double>(5e9, 60e9)(rng),
                           std::uniform_int_distribution<int>(0, 3)(rng), trial % 2 == 0);
    SCOPED_TRACE("trial " + std::to_string(trial));
    testing::expect_exact_simgrid_equals_analytic(setup);
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, WeightStashOffload, ::testing::ValuesIn(kAsynchronous),
                         [](const auto& info) { return proto::ScheduleKind_Name(info.param); });

TEST(WeightStashOffloadCli, OnlyAsynchronousPipelinesStashWeights) {
  const testing::CliResult gpipe = testing::run_pipetwin(
      "simulate builtin:offload-vgg16-a100 --set schedule.offload.weight_stashes=true");
  EXPECT_EQ(gpipe.exit_code, 2);
  EXPECT_THAT(gpipe.err, HasSubstr("schedule.offload.weight_stashes"));
  EXPECT_THAT(gpipe.err, HasSubstr("only asynchronous pipelines"));
  const testing::CliResult nothing = testing::run_pipetwin(
      "simulate builtin:offload-vgg16-a100 --set schedule.offload.activations=false");
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_THAT(nothing.err, HasSubstr("schedule.offload.activations"));
}

}  // namespace
}  // namespace pipetwin
