// Resource guards: the size estimate bounds the real Program (checked against built ones on
// random scenarios of every schedule), and a scenario past the limits is an InputError that
// names the estimate, the limits, the field that drives it and the flags that raise them.
#include "sim/driver/resource_limits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

#include "cli_runner.h"
#include "random_setup.h"
#include "random_trials.h"
#include "shipped_scenarios.h"
#include "sim/driver/build_program.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/errors.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(ResourceLimits, TheEstimateBoundsBuiltProgramsClosely) {
  std::mt19937 rng(17);
  for (auto kind : {proto::GPIPE, proto::ONE_F_ONE_B, proto::INTERLEAVED_ONE_F_ONE_B, proto::UMPIPE,
                    proto::PIPEDREAM_ASYNC, proto::PIPEDREAM_2BW, proto::APAPO, proto::ZB_H1,
                    proto::ZB_V, proto::ZB_AUTO, proto::DUALPIPE}) {
    for (int trial = 0; trial < 10; ++trial) {
      ResolvedScenario setup = testing::random_setup(rng, kind);
      setup.training.iterations = 1 + trial % 3;
      if (!is_asynchronous(kind)) setup.training.zero_stage = trial % 4;
      const double built = build_program(setup).size();
      const double estimated = estimate_program_size(setup).instructions;
      SCOPED_TRACE(proto::ScheduleKind_Name(kind) + " trial " + std::to_string(trial));
      EXPECT_GE(estimated, built);
      EXPECT_LE(estimated, 4 * built + 64);
    }
  }
  for (int trial = 0; trial < 10; ++trial) {
    const ResolvedScenario setup = testing::random_pipefb_setup(rng, trial % 2 == 1);
    const double built = build_program(setup).size();
    EXPECT_GE(estimate_program_size(setup).instructions, built) << "PipeFB trial " << trial;
  }
}

// Every shipped scenario, those of a cluster's size as two replicas of a small pipeline
// (tensor, context and expert parallelism, ZeRO, buckets and DualPipe among them).
TEST(ResourceLimits, TheEstimateBoundsEveryShippedScenariosProgram) {
  for (const std::string& name : testing::shipped_scenario_names()) {
    std::vector<std::string> set;
    if (testing::cluster_sized(name)) {
      set = testing::one_small_replica_overrides(name);
      for (std::string& s : set) {
        if (s == "training.data_parallel=1") s = "training.data_parallel=2";
        if (s == "cluster.nodes=2") s = "cluster.nodes=4";
        if (s.rfind("training.global_batch=", 0) == 0) {
          s = "training.global_batch=" + std::to_string(2 * std::stoi(s.substr(22)));
        }
      }
    }
    const ResolvedScenario setup = resolve_scenario(
        load_scenario(std::string(PIPETWIN_SOURCE_DIR) + "/scenarios/" + name + ".textproto", set));
    if (setup.freeze.enabled) continue;  // a training run of phases: no one Program
    const double built = build_program(setup).size();
    const double estimated = estimate_program_size(setup).instructions;
    EXPECT_GE(estimated, built) << name;
    EXPECT_LE(estimated, 1.5 * built + 64) << name;
  }
}

TEST(ResourceLimits, TheLargestFactorDrivesTheEstimate) {
  ResolvedScenario setup = testing::uniform_setup(proto::ONE_F_ONE_B, 4, 8, 1e-3, 2e-3);
  setup.training.iterations = 100'000'000;
  ProgramSizeEstimate size = estimate_program_size(setup);
  EXPECT_EQ(size.driver, "training.iterations");
  EXPECT_EQ(size.driver_value, 1e8);
  setup.training.iterations = 1;
  setup.training.microbatches = 10'000'000;
  size = estimate_program_size(setup);
  EXPECT_EQ(size.driver, "training.microbatches");
  EXPECT_FALSE(within_limits(size, ResourceLimits{}));
  EXPECT_TRUE(within_limits(size, ResourceLimits{1'000'000'000, 1e12}));
}

TEST(ResourceLimits, PastTheLimitsIsAnInputErrorThatSaysWhatToDo) {
  ResolvedScenario setup = testing::uniform_setup(proto::GPIPE, 2, 4, 1e-3, 2e-3);
  setup.training.iterations = 10'000'000;
  EXPECT_THAT(
      [&] { check_resource_limits(setup, ResourceLimits{}); },
      ::testing::ThrowsMessage<InputError>(AllOf(
          HasSubstr("about 360 million instructions"),
          HasSubstr("50 million instructions (--max-instructions)"),
          HasSubstr("(--max-memory GiB)"), HasSubstr("training.iterations = 10000000 drives it"))));
  setup.training.iterations = 10;
  EXPECT_NO_THROW(check_resource_limits(setup, ResourceLimits{}));
}

// What the estimate charges follows the run: SimGrid's state on top of the analytic
// engine's, the timeline on top of its Program.
TEST(ResourceLimits, TheMemoryEstimateFollowsTheEngineAndTheTimeline) {
  const ResolvedScenario setup = testing::uniform_setup(proto::ONE_F_ONE_B, 4, 8, 1e-3, 2e-3);
  const auto bytes = [&](Engine engine, bool timeline) {
    return estimate_program_size(setup, {engine, timeline}).memory_bytes;
  };
  EXPECT_LT(bytes(Engine::kAnalytic, false), bytes(Engine::kAnalytic, true));
  EXPECT_LT(bytes(Engine::kAnalytic, false), bytes(Engine::kSimgrid, false));
  EXPECT_LT(bytes(Engine::kSimgrid, false), bytes(Engine::kSimgrid, true));
  EXPECT_EQ(estimate_program_size(setup, {Engine::kSimgrid, true}).instructions,
            estimate_program_size(setup).instructions);
}

// The peak resident set of `pipetwin ARGS`, in bytes. Python starts it: a child forked
// from this test (which maps LibTorch) would count the test's own pages as its peak.
double peak_resident_bytes(const std::string& args) {
  const testing::CliResult r =
      testing::run_binary("python3",
                          "-c 'import resource, subprocess, sys; subprocess.run(sys.argv[1:], "
                          "stdout=subprocess.DEVNULL, check=True); "
                          "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' " +
                              std::string(PIPETWIN_BINARY) + " " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return std::atof(r.out.c_str()) * 1024;
}

// The estimate against the peak resident set of real runs, within 25%: a 70B on 1024 GPUs
// (250 k instructions), with and without its timeline. The figures are a Release build's: a
// sanitized binary keeps shadow memory and quarantines what it frees.
TEST(ResourceLimits, TheMemoryEstimateIsWithinAQuarterOfThePeak) {
  if (testing::kSanitized) GTEST_SKIP() << "a sanitized binary's memory is not the product's";
  const std::string scenario =
      std::string(PIPETWIN_SOURCE_DIR) + "/scenarios/llama3-70b-1024gpu.textproto";
  const ResolvedScenario setup = resolve_scenario(load_scenario(scenario, {}));
  testing::TempDir dir;
  for (bool timeline : {false, true}) {
    const std::string output =
        timeline ? "--trace " + (dir.path() / "trace.json").string() : std::string("--json");
    const double peak = peak_resident_bytes("simulate " + scenario + " " + output);
    const double estimate =
        estimate_program_size(setup, {Engine::kAnalytic, timeline}).memory_bytes;
    EXPECT_NEAR(estimate, peak, 0.25 * peak) << (timeline ? "with" : "without") << " a timeline";
  }
}

// The memory limit follows the machine: half of what /proc/meminfo says is available.
TEST(ResourceLimits, TheMemoryLimitIsHalfOfWhatTheMachineHasAvailable) {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  double available_kib = -1;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) available_kib = std::stod(line.substr(13));
  }
  ASSERT_GT(available_kib, 0) << "no MemAvailable in /proc/meminfo";
  // The machine's free memory moves between two reads: within 5%.
  EXPECT_NEAR(ResourceLimits{}.max_memory_bytes,
              std::max(1024.0 * 1024 * 1024, available_kib * 1024 / 2),
              0.05 * available_kib * 1024 / 2);
}

// The oversized inputs a typo makes: an error at once (exit 2), or for a long run of
// identical iterations, the answer from its steady state.
TEST(ResourceLimits, OversizedScenariosFromTheCommandLine) {
  testing::CliResult r = testing::run_pipetwin(
      "simulate --set training.microbatches=100000000 --set training.global_batch=100000000");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("training.microbatches = 100000000 drives it"));
  r = testing::run_pipetwin(
      "simulate --set cluster.nodes=1000000 --set training.data_parallel=1000000 "
      "--set training.global_batch=32000000");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("training.data_parallel = 1000000 drives it"));
  r = testing::run_pipetwin("simulate --set training.iterations=100000000 --engine simgrid");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("training.iterations = 100000000 drives it"));
  r = testing::run_pipetwin("simulate --set training.iterations=100000000 --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"extrapolated\": true"));
  EXPECT_THAT(r.out, HasSubstr("\"iterations\": 100000000"));
}

// The same guards on the other commands that build Programs or hold many of them.
TEST(ResourceLimits, SweepGridsAndPlanPopulationsAreGuardedToo) {
  testing::CliResult r = testing::run_pipetwin(
      "sweep --vary training.iterations=1,2,3 --vary training.microbatches=1,2 --max-points 5");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("the grid has 6 points, more than --max-points 5"));
  r = testing::run_pipetwin("sweep --vary training.iterations=1,1000000000");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("point training.iterations=1000000000: the scenario would build"));
  r = testing::run_pipetwin("plan --search umpipe --population 100000000");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--population 100000000: the search would hold"));
}

}  // namespace
}  // namespace pipetwin

namespace pipetwin {
namespace {

// Sanitizers reserve terabytes of address space for their shadow memory: no ulimit -v there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// A 400,000-GPU what-if under `ulimit -v 3000000` (3 GB of address space): refused by the
// estimate, exit 2 naming the field, not std::bad_alloc halfway through building it.
TEST(ResourceLimits, TheProcesssOwnAddressSpaceLimitBoundsTheMemoryLimit) {
  if (kSanitized) GTEST_SKIP() << "a sanitized build cannot run under ulimit -v";
  const testing::CliResult r = testing::run_binary(
      std::string("ulimit -v 3000000; exec ") + PIPETWIN_BINARY,
      "simulate --set cluster.nodes=100000 --set training.data_parallel=100000 --set "
      "training.global_batch=800000 --json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("training.data_parallel = 100000 drives it"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("bad_alloc"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pipetwin
