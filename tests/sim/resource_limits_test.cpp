// Resource guards: the size estimate bounds the real Program (checked against built ones on
// random scenarios of every schedule), and a scenario past the limits is an InputError that
// names the estimate, the limits, the field that drives it and the flags that raise them.
#include "sim/resource_limits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <string>

#include "cli_runner.h"
#include "random_setup.h"
#include "sim/build_program.h"
#include "sim/spec/errors.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(ResourceLimits, TheEstimateBoundsBuiltProgramsClosely) {
  std::mt19937 rng(17);
  for (auto kind : {proto::GPIPE, proto::ONE_F_ONE_B, proto::INTERLEAVED_ONE_F_ONE_B, proto::UMPIPE,
                    proto::PIPEDREAM_ASYNC, proto::PIPEDREAM_2BW, proto::APAPO}) {
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

TEST(ResourceLimits, TheLargestFactorDrivesTheEstimate) {
  ResolvedScenario setup = testing::uniform_setup(proto::ONE_F_ONE_B, 4, 8, 1e-3, 2e-3);
  setup.training.iterations = 100'000'000;
  ProgramSizeEstimate size = estimate_program_size(setup);
  EXPECT_EQ(size.driver, "training.iterations");
  EXPECT_EQ(size.driver_value, 1e8);
  setup.training.iterations = 1;
  setup.training.microbatches = 1'000'000;
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
      "simulate --set cluster.nodes=100000 --set training.data_parallel=100000 "
      "--set training.global_batch=3200000");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--max-instructions"));
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
