// The search against brute force with the analytic engine on small spaces, its skipped
// combinations and their reasons, and its promise never to be slower than the scenario's own.
#include "sim/tune/tune_search.h"

#include <gtest/gtest.h>

#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// A scenario shipped in scenarios/, as the binary embeds it.
LoadedScenario shipped(const std::string& name, const std::vector<std::string>& set = {}) {
  return load_scenario("builtin:" + name, set);
}

// Every configuration of the space, each simulated whole by the analytic engine: the fastest
// within the memory limit.
std::optional<TunePoint> brute_force(const LoadedScenario& loaded, const TuneOptions& options,
                                     double limit) {
  ResolvedScenario base = resolve_scenario(loaded);
  TuneSpace space = default_space(base);
  for (const std::string& fix : options.fixes) fix_choice(space, fix);
  SkipCounts skipped;
  std::optional<TunePoint> best;
  for (const TuneConfig& config : enumerate_configs(space, base, skipped)) {
    std::string reason;
    const std::optional<ResolvedScenario> setup = apply_config(loaded, config, reason);
    if (!setup) continue;
    const TunePoint p = simulate_config(*setup, config, Evaluator::kAnalytic);
    if (static_cast<double>(p.peak_memory_bytes) > limit) continue;
    if (!best || p.iteration_time_s < best->iteration_time_s) best = p;
  }
  return best;
}

void expect_brute_force(const LoadedScenario& loaded, const TuneOptions& options) {
  const TuneResult found = tune(loaded, options);
  ASSERT_TRUE(found.best.has_value());
  const std::optional<TunePoint> truth = brute_force(loaded, options, found.memory_limit_bytes);
  ASSERT_TRUE(truth.has_value());
  EXPECT_NEAR(found.best->iteration_time_s, truth->iteration_time_s, 1e-9 * truth->iteration_time_s)
      << "tune: " << config_name(found.best->config)
      << "\nbrute force: " << config_name(truth->config);
  EXPECT_GT(found.evaluated, 3 * options.refine);  // the engine saw a small part of the space
}

TEST(TuneSearch, EqualsBruteForceOnAGptOnEightGpus) {
  TuneOptions options;
  options.fixes = {"microbatch_size=1,2", "training.zero_stage=0,1"};
  options.refine = 5;
  expect_brute_force(shipped("gpt-8gpu-1f1b"), options);
}

// Mixtral on 64 H100s under a limit that rules out the fastest configurations (30 GiB and
// more): the search must find the best of those that fit.
TEST(TuneSearch, EqualsBruteForceOnAMixtureOfExpertsUnderAMemoryLimit) {
  TuneOptions options;
  options.fixes = {"training.tensor_parallel=2,4",
                   "schedule.stages=2,4",
                   "microbatch_size=1",
                   "training.zero_stage=0,1",
                   "training.recompute=NONE",
                   "schedule.kind=ONE_F_ONE_B,ZB_H1,ZB_V"};
  options.refine = 4;
  options.max_memory_bytes = 28.0 * (1 << 30);
  expect_brute_force(shipped("mixtral-8x7b-64gpu"), options);
}

TEST(TuneSearch, InvalidCombinationsAreSkippedAndCountedByReason) {
  TuneOptions options;
  options.fixes = {"schedule.stages=3,4", "schedule.kind=ZB_H1,ONE_F_ONE_B",
                   "training.recompute=NONE,FULL", "microbatch_size=1"};
  options.refine = 1;
  const TuneResult r = tune(shipped("gpt-8gpu-1f1b"), options);
  EXPECT_GT(r.skipped.at("TP x CP x PP does not divide the GPUs"), 0);
  EXPECT_EQ(r.skipped.count("zero-bubble schedules do not recompute activations"), 0u);
  EXPECT_GT(r.evaluated, 0);
  for (const TunePoint& p : r.pareto) EXPECT_EQ(p.config.stages, 4);
}

TEST(TuneSearch, ReasonsThatDifferInNumbersOnlyCountTogether) {
  TuneConfig config;
  config.stages = 2;
  config.tensor_parallel = 3;  // the resolver refuses 3 GPUs per stage on 8-GPU nodes
  config.data_parallel = 1;
  std::string reason;
  EXPECT_FALSE(apply_config(shipped("gpt-8gpu-1f1b"), config, reason).has_value());
  EXPECT_EQ(reason.find('3'), std::string::npos) << reason;
  EXPECT_FALSE(reason.empty());
}

TEST(TuneSearch, TheBestIsNeverSlowerThanTheScenariosOwn) {
  TuneOptions options;
  options.fixes = {"training.tensor_parallel=4,8", "schedule.stages=4,8",
                   "schedule.kind=ONE_F_ONE_B,ZB_H1", "training.recompute=NONE",
                   "microbatch_size=1"};
  options.refine = 3;
  const TuneResult r = tune(shipped("llama3-70b-1024gpu"), options);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_LE(r.best->iteration_time_s, r.own.iteration_time_s);
  EXPECT_LE(static_cast<double>(r.best->peak_memory_bytes), r.memory_limit_bytes);
  ASSERT_TRUE(r.own_fast.has_value());
  EXPECT_EQ(r.own_fast->peak_memory_bytes, r.own.peak_memory_bytes);
}

// A configuration whose Program would exceed the engine's limits is skipped with its reason,
// never simulated: the search goes on to the next.
TEST(TuneSearch, ConfigurationsTooLargeToSimulateAreSkipped) {
  const LoadedScenario loaded = shipped("gpt-8gpu-1f1b");
  ResolvedScenario own = resolve_scenario(loaded);
  own.training.iterations = 1;
  TuneOptions options;
  options.fixes = {"microbatch_size=1,2", "training.zero_stage=0"};
  options.refine = 5;
  options.limits.max_instructions =
      static_cast<int64_t>(estimate_program_size(own, {Engine::kAnalytic, false}).instructions);
  const TuneResult r = tune(loaded, options);
  EXPECT_GT(r.skipped.at(kTooLargeForTheEngine), 0);
  ASSERT_TRUE(r.best.has_value());
  for (const TunePoint& p : r.refined) {
    std::string reason;
    const std::optional<ResolvedScenario> setup = apply_config(loaded, p.config, reason);
    EXPECT_TRUE(p.config == r.own.config ||
                fits_engine(*setup, Evaluator::kAnalytic, options.limits))
        << config_name(p.config);
  }
}

TEST(TuneSearch, FixRejectsUnknownFieldsAndValues) {
  ResolvedScenario base = resolve_scenario(shipped("gpt-8gpu-1f1b"));
  TuneSpace space = default_space(base);
  try {
    fix_choice(space, "training.tensor_paralel=2");
    FAIL() << "a typo was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'training.tensor_parallel'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(fix_choice(space, "schedule.kind=ZB_H3"), InputError);
  EXPECT_THROW(fix_choice(space, "schedule.stages=0"), InputError);
  EXPECT_THROW(fix_choice(space, "training.zero_stage=4"), InputError);
  EXPECT_THROW(fix_choice(space, "schedule.stages"), InputError);
}

}  // namespace
}  // namespace pipetwin
