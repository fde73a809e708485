// Activation offload and the memory model: copies that cost nothing change nothing but
// the peak; a prefetch horizon too short for the host link delays every backward by
// exactly the copy time it cannot hide; the simgrid engine in exact mode reproduces the
// analytic timestamps with offload; resident memory follows precision and optimizer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "cli_runner.h"
#include "random_setup.h"
#include "same_times.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/memory_curve.h"
#include "sim/model/training_memory.h"
#include "sim/schedule/build_program.h"
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
// more than one stash (GPipe: M > 1; 1F1B: min(K - s, M) > 1) peaks lower.
TEST_P(OffloadClosedForm, FreeCopiesKeepTheTimeAndLowerThePeak) {
  std::mt19937 rng(31);
  for (int trial = 0; trial < 50; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 8)(rng);
    const int M = std::uniform_int_distribution<int>(1, 16)(rng);
    const int h = std::uniform_int_distribution<int>(0, 4)(rng);
    ResolvedScenario setup = testing::uniform_setup(GetParam(), K, M, 1e-3, 2e-3, 1, 4, 1000);
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
                         ::testing::Values(proto::GPIPE, proto::ONE_F_ONE_B),
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
  for (int trial = 0; trial < 25; ++trial) {
    ResolvedScenario setup = testing::random_setup(rng, GetParam());
    enable_offload(setup, std::uniform_real_distribution<double>(5e9, 60e9)(rng),
                   std::uniform_real_distribution<double>(0, 5e-6)(rng),
                   std::uniform_int_distribution<int>(0, 4)(rng),
                   std::uniform_real_distribution<double>(0.1, 1.0)(rng));
    setup.simgrid.exact = true;
    const Program p = build_program(setup);
    SCOPED_TRACE("trial " + std::to_string(trial));
    testing::expect_same_times(p, run_analytic(p, setup.cluster),
                               run_simgrid(p, setup.cluster, setup.simgrid));
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, OffloadExact,
                         ::testing::Values(proto::GPIPE, proto::ONE_F_ONE_B,
                                           proto::INTERLEAVED_ONE_F_ONE_B, proto::UMPIPE),
                         [](const auto& info) { return proto::ScheduleKind_Name(info.param); });

// SELECTIVE keeps only offloads that pay: never slower than no offload, never a higher peak.
TEST(OffloadSelective, NeverSlowerAndNeverHigher) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 30; ++trial) {
    ResolvedScenario setup = testing::random_setup(rng, proto::ONE_F_ONE_B);
    setup.training.data_parallel = 1;
    setup.training.global_batch = setup.training.microbatches * 4;
    const Program plain = build_program(setup);
    const ExecutionTimes plain_times = run_analytic(plain, setup.cluster);
    const MemoryCurve plain_memory = memory_curve(plain, plain_times);
    enable_offload(setup, std::uniform_real_distribution<double>(1e9, 100e9)(rng), 1e-6, 2);
    setup.schedule.offload.policy = proto::Offload::SELECTIVE;
    const Program p = build_program(setup);
    const ExecutionTimes t = run_analytic(p, setup.cluster);
    const MemoryCurve memory = memory_curve(p, t);
    EXPECT_LE(makespan(t), makespan(plain_times) * (1 + 1e-9)) << "trial " << trial;
    for (int32_t d = 0; d < p.num_devices; ++d) {
      EXPECT_LE(memory.peaks[d].bytes, plain_memory.peaks[d].bytes) << "trial " << trial;
    }
  }
}

// Resident bytes per parameter: fp32 Adam 16, fp16 Adam 8, mixed-precision Adam 16
// (2 + 2 + 4 master + 8 moments, as ZeRO counts), SGD fp32 8, momentum mixed 12.
TEST(TrainingMemory, BytesPerParameterFollowPrecisionAndOptimizer) {
  auto total = [](proto::Precision precision, bool mixed, proto::Optimizer optimizer) {
    TrainingSpec t;
    t.precision = precision;
    t.mixed_precision = mixed;
    t.optimizer = optimizer;
    return bytes_per_parameter(t).total();
  };
  EXPECT_EQ(total(proto::FP32, false, proto::ADAM), 16);
  EXPECT_EQ(total(proto::FP16, false, proto::ADAM), 8);
  EXPECT_EQ(total(proto::BF16, true, proto::ADAM), 16);
  EXPECT_EQ(total(proto::FP32, false, proto::SGD), 8);
  EXPECT_EQ(total(proto::FP16, true, proto::MOMENTUM), 12);
  EXPECT_EQ(total(proto::FP16, true, proto::SGD), 8);
}

// The Program's resident bytes on a device: parameters (parameter_bytes / 4) times the
// bytes per parameter of its layers.
TEST(TrainingMemory, ResidentBytesPerDevice) {
  ResolvedScenario setup = testing::uniform_setup(proto::ONE_F_ONE_B, 2, 4, 1e-3, 2e-3);
  for (ModelLayer& layer : setup.model.layers) layer.parameter_bytes = 4'000'000;
  setup.training.optimizer = proto::ADAM;
  setup.training.precision = proto::BF16;
  setup.training.mixed_precision = true;
  const Program p = build_program(setup);
  EXPECT_EQ(p.static_bytes[0], 16 * 1'000'000);
  EXPECT_EQ(p.static_bytes[1], 16 * 1'000'000);
}

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

namespace pipetwin {
namespace {

// PipeFB with free communication and t_b >= t_f: microbatch 0 runs forward through the K
// forward devices, then the backward devices are the critical chain, each BWD right after
// the one before: makespan K t_f + (K + M - 1) t_b. A forward device holds one stash at a
// time; backward device s min(W_s, M), W_s = ceil((K - s)(t_f + t_b) / t_b), the window
// that covers a microbatch's round trip.
TEST(PipeFb, ClosedFormTimeAndStashes) {
  std::mt19937 rng(8);
  for (int trial = 0; trial < 60; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 6)(rng);
    const int M = std::uniform_int_distribution<int>(1, 16)(rng);
    const double tf = std::uniform_real_distribution<double>(1e-3, 2e-3)(rng);
    const double tb = std::uniform_real_distribution<double>(2e-3, 4e-3)(rng);
    ResolvedScenario setup = testing::uniform_setup(proto::PIPEFB, K, M, tf, tb, 1, 4, 1000);
    for (int d = K; d < 2 * K; ++d) {
      setup.cluster.devices.push_back({d, 0, "gpu" + std::to_string(d), 1e15, 1e15});
    }
    setup.cluster.gpus_per_node = 2 * K;
    setup.cluster.intra_node = {1e30, 0};  // free transfers
    const Program p = build_program(setup);
    const ExecutionTimes t = run_analytic(p, setup.cluster);
    const MemoryCurve memory = memory_curve(p, t);
    SCOPED_TRACE("K=" + std::to_string(K) + " M=" + std::to_string(M));
    EXPECT_NEAR(makespan(t), K * tf + (K + M - 1) * tb, 1e-12);
    for (int s = 0; s < K; ++s) {
      EXPECT_EQ(memory.peaks[2 * s].bytes, 4 * 1000) << "forward device of stage " << s;
      const int window = static_cast<int>(std::ceil((K - s) * (tf + tb) / tb - 1e-9));
      EXPECT_EQ(memory.peaks[2 * s + 1].bytes, std::min(window, M) * 4 * 1000)
          << "backward device of stage " << s;
    }
  }
}

}  // namespace
}  // namespace pipetwin

namespace pipetwin {
namespace {

// PipeFB Programs on random costs, sizes and links (with and without recomputation) are
// valid (no deadlock: build_program validates) and the simgrid engine in exact mode gives
// the analytic timestamps.
TEST(PipeFb, RandomProgramsAreValidAndExactSimgridAgrees) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 30; ++trial) {
    ResolvedScenario setup = testing::random_pipefb_setup(rng, trial % 2 == 1);
    setup.simgrid.exact = true;
    SCOPED_TRACE("trial " + std::to_string(trial));
    const Program p = build_program(setup);
    testing::expect_same_times(p, run_analytic(p, setup.cluster),
                               run_simgrid(p, setup.cluster, setup.simgrid));
  }
}

}  // namespace
}  // namespace pipetwin
