// The fast UMPIPE evaluator equals the analytic executor, bit for bit, on random plans:
// random stages, cuts, fixed and per-sample costs, bytes, links, device speeds and
// host-side dispatch gaps.
#include "sim/umpipe/plan_evaluator.h"

#include <gtest/gtest.h>

#include <random>

#include "random_setup.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"

namespace pipetwin {
namespace {

double analytic_makespan(const ResolvedScenario& setup) {
  const Program program = build_program(setup);
  const ExecutionTimes times = run_analytic(program, setup.cluster);
  return *std::max_element(times.end_s.begin(), times.end_s.end());
}

TEST(PlanEvaluator, EqualsTheAnalyticExecutorOnRandomPlans) {
  std::mt19937 rng(31337);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    ResolvedScenario setup = testing::random_setup(rng, proto::UMPIPE);
    setup.training.data_parallel = 1;
    setup.training.iterations = 1;
    setup.schedule.stage_plans =
        testing::random_plan(rng, setup.schedule.stages, setup.training.global_batch);
    // Host-side dispatch gaps on two trials of three: the search must see what they cost.
    if (trial % 3 != 0) {
      std::uniform_real_distribution<double> gap(0, 2e-4);
      setup.cluster.dispatch.issue_s = gap(rng);
      setup.cluster.dispatch.wakeup_s = trial % 3 == 1 ? gap(rng) : 0;
    }
    const PlanEvaluator evaluator(setup);
    const double fast = evaluator.iteration_time(setup.schedule.stage_plans);
    const double reference = analytic_makespan(setup);
    EXPECT_EQ(fast, reference) << "trial " << trial << ": " << setup.schedule.stages
                               << " stages, batch " << setup.training.global_batch;
    ++checked;
  }
  EXPECT_EQ(checked, 300);
}

TEST(PlanEvaluator, EqualPlansMatchGpipe) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    ResolvedScenario setup = testing::random_setup(rng, proto::GPIPE);
    setup.training.data_parallel = 1;
    setup.training.iterations = 1;
    const PlanEvaluator evaluator(setup);
    const UnequalPlan plan =
        equal_plan(setup.schedule.stages, setup.training.global_batch, setup.training.microbatches);
    EXPECT_EQ(evaluator.iteration_time(plan), analytic_makespan(setup)) << trial;
  }
}

TEST(PlanEvaluator, PopulationOnThreadsEqualsOneByOne) {
  std::mt19937 rng(99);
  ResolvedScenario setup = testing::random_setup(rng, proto::UMPIPE);
  setup.training.data_parallel = 1;
  const PlanEvaluator evaluator(setup);
  std::vector<UnequalPlan> population;
  for (int i = 0; i < 500; ++i) {
    population.push_back(
        testing::random_plan(rng, setup.schedule.stages, setup.training.global_batch));
  }
  std::vector<double> threaded(population.size());
  evaluator.evaluate(population, threaded, 4);
  for (size_t i = 0; i < population.size(); ++i) {
    EXPECT_EQ(threaded[i], evaluator.iteration_time(population[i]));
  }
}

}  // namespace
}  // namespace pipetwin
