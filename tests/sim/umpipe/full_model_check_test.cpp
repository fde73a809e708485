// plan --search umpipe on a scenario with dispatch gaps: the search's plan and the
// baselines' are simulated with the full model, and an unequal plan must gain enough.
#include "sim/umpipe/full_model_check.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin {
namespace {

UmpipeSearchResult small_search(const ResolvedScenario& setup) {
  UmpipeSearchOptions options;
  options.dgap.population = 32;
  options.dgap.generations = 10;
  options.threads = 1;
  return search_umpipe(setup, options);
}

TEST(FullModelCheck, OnlyAFittedScenarioNeedsIt) {
  EXPECT_FALSE(evaluator_misses_model(
      resolve_scenario(load_scenario("builtin:umpipe-synthetic.textproto", {}))));
  EXPECT_TRUE(evaluator_misses_model(resolve_scenario(
      load_scenario("builtin:umpipe-synthetic.textproto", {"cluster.dispatch.wakeup_us=50"}))));
}

TEST(FullModelCheck, ChoosesTheFastestSimulatedUnlessTheScenariosOwnIsCloseEnough) {
  const ResolvedScenario setup = resolve_scenario(
      load_scenario("builtin:umpipe-synthetic.textproto", {"cluster.dispatch.wakeup_us=50"}));
  const UmpipeSearchResult result = small_search(setup);
  const FullModelChoice fastest = choose_with_full_model(setup, result, 0);
  ASSERT_EQ(fastest.candidates.size(), 4u);
  double best = fastest.candidates.front().second;
  for (const auto& [name, seconds] : fastest.candidates) best = std::min(best, seconds);
  EXPECT_EQ(fastest.seconds, best);
  // Asking another plan to be 10x faster leaves the scenario's own microbatches.
  const FullModelChoice careful = choose_with_full_model(setup, result, 9);
  EXPECT_EQ(careful.chosen, "GPipe");
  EXPECT_EQ(careful.plan, result.baselines.gpipe_plan);
}

}  // namespace
}  // namespace pipetwin

namespace pipetwin {
namespace {

// A plan file turned back into an equal-microbatch schedule from the command line.
TEST(Overrides, EmptyAListOfMessages) {
  const LoadedScenario plan =
      load_scenario("builtin:umpipe-synthetic.textproto",
                    {"schedule.kind=UMPIPE", "schedule.stage_plans[0].forward_sizes=[32]"});
  EXPECT_EQ(plan.scenario.schedule().stage_plans_size(), 1);
  const LoadedScenario equal =
      load_scenario("builtin:umpipe-synthetic.textproto",
                    {"schedule.stage_plans[0].forward_sizes=[32]", "schedule.stage_plans=[]"});
  EXPECT_EQ(equal.scenario.schedule().stage_plans_size(), 0);
}

}  // namespace
}  // namespace pipetwin
