// UMPIPE planning end to end: DGAP with the real PlanEvaluator matches exhaustive search on
// small pipelines and never loses to a baseline; `pipetwin plan --search umpipe` prints the
// promised JSON, writes a plan that `simulate` runs in the predicted time, and rejects bad
// input with exit code 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "cli_runner.h"
#include "sim/spec/errors.h"
#include "sim/umpipe/baselines.h"
#include "sim/umpipe/dgap.h"
#include "sim/umpipe/plan_evaluator.h"
#include "sim/umpipe/umpipe_search.h"

namespace pipetwin {
namespace {

using nlohmann::json;
using testing::run_pipetwin;
using testing::TempDir;

// K stages of one layer each with random fixed + per-sample costs, activations over a
// link with latency: the best cut differs from stage to stage.
ResolvedScenario small_setup(std::mt19937& rng, int stages, int batch) {
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  ResolvedScenario setup;
  setup.name = "small";
  for (int d = 0; d < stages; ++d) {
    setup.cluster.devices.push_back(
        {d, 0, std::string("gpu").append(std::to_string(d)), 1e14, 1e15});
  }
  setup.cluster.gpus_per_node = stages;
  setup.cluster.intra_node = {uniform(1, 20) * 1e9, uniform(0, 300) * 1e-6};
  for (int l = 0; l < stages; ++l) {
    ModelLayer layer;
    layer.name = std::string("l").append(std::to_string(l));
    layer.fwd.fixed_s = uniform(0, 5e-3);
    layer.fwd.seconds_per_sample = uniform(1e-4, 2e-3);
    layer.bwd.fixed_s = uniform(0, 1e-2);
    layer.bwd.seconds_per_sample = uniform(2e-4, 4e-3);
    layer.activation_bytes_per_sample = uniform(1e5, 1e7);
    layer.stash_bytes_per_sample = layer.activation_bytes_per_sample;
    if (l + 1 < stages) layer.consumers = {l + 1};
    setup.model.layers.push_back(layer);
  }
  setup.training = {batch, std::min(batch, 2), 1, proto::SGD, 1};
  setup.schedule.kind = proto::GPIPE;
  setup.schedule.stages = stages;
  return setup;
}

// K identical stages, t_f and t_b per microbatch of 4 samples, no communication cost
// (as tests/uniform_setup.h, whose string building trips a GCC 12 -Wrestrict false alarm
// when inlined here).
ResolvedScenario uniform_pipeline(int stages, int microbatches, double tf, double tb,
                                  int samples_per_microbatch = 4) {
  ResolvedScenario setup;
  setup.name = "uniform";
  for (int d = 0; d < stages; ++d) {
    setup.cluster.devices.push_back(
        {d, 0, std::string("gpu").append(std::to_string(d)), 1e15, 1e15});
  }
  setup.cluster.gpus_per_node = stages;
  setup.cluster.intra_node = {1e12, 0.0};
  for (int l = 0; l < stages; ++l) {
    ModelLayer layer;
    layer.name = std::string("l").append(std::to_string(l));
    layer.fwd.seconds_per_sample = tf / samples_per_microbatch;
    layer.bwd.seconds_per_sample = tb / samples_per_microbatch;
    if (l + 1 < stages) layer.consumers = {l + 1};
    setup.model.layers.push_back(layer);
  }
  setup.training = {microbatches * samples_per_microbatch, microbatches, 1, proto::SGD, 1};
  setup.schedule.kind = proto::GPIPE;
  setup.schedule.stages = stages;
  return setup;
}

struct Instance {
  int stages, batch, cap;
};

TEST(UmpipeSearch, DgapMatchesExhaustiveSearchWithTheRealEvaluator) {
  std::mt19937 rng(2024);
  const Instance instances[] = {{2, 4, 0}, {2, 5, 0}, {3, 4, 0}, {2, 6, 3}, {3, 5, 2}};
  for (int trial = 0; trial < 3; ++trial) {
    for (const Instance& in : instances) {
      const ResolvedScenario setup = small_setup(rng, in.stages, in.batch);
      const PlanEvaluator evaluator(setup);
      const PopulationEvaluate evaluate = [&](std::span<const UnequalPlan> plans,
                                              std::span<double> seconds) {
        evaluator.evaluate(plans, seconds, 1);
      };
      const auto exhaustive = exhaustive_search(evaluate, in.stages, in.batch, in.cap, 1 << 20);
      ASSERT_TRUE(exhaustive.has_value());
      DgapOptions options;
      options.population = 64;
      options.generations = 100;
      options.seed = static_cast<uint64_t>(trial + 1);
      options.max_microbatches = in.cap;
      // Unseeded: the search alone has to find the optimum.
      const DgapResult ga = run_dgap(evaluate, in.stages, in.batch, options, {});
      EXPECT_EQ(ga.best_seconds, exhaustive->seconds)
          << in.stages << " stages, batch " << in.batch << ", cap " << in.cap << ", trial " << trial
          << ": GA " << plan_text(ga.best.stages[0]) << " vs exhaustive "
          << plan_text(exhaustive->plan.stages[0]);
      EXPECT_EQ(evaluator.iteration_time(ga.best), ga.best_seconds);
    }
  }
}

TEST(UmpipeSearch, NeverWorseThanAnyBaseline) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 6; ++trial) {
    const int stages = 2 + trial % 4, batch = 8 + 4 * trial;
    ResolvedScenario setup = small_setup(rng, stages, batch);
    setup.training.microbatches = 4;
    UmpipeSearchOptions options;
    options.dgap.population = 16;
    options.dgap.generations = 2;  // too short to find much: the seeds must carry it
    options.threads = 2;
    const UmpipeSearchResult result = search_umpipe(setup, options);
    const UmpipeBaselineResults& b = result.baselines;
    EXPECT_EQ(plan_problem(result.best, stages, batch), "");
    EXPECT_LE(result.best_s, b.gpipe_s);
    EXPECT_LE(result.best_s, b.local_greedy_s);
    EXPECT_LE(result.best_s, b.global_dp.seconds);
    if (b.exhaustive) {
      EXPECT_EQ(result.best_s, b.exhaustive->seconds);
    }
    EXPECT_EQ(PlanEvaluator(setup).iteration_time(result.best), result.best_s);
    EXPECT_EQ(b.gpipe_plan, equal_plan(stages, batch, 4));
    EXPECT_LE(b.global_dp.seconds, b.gpipe_s);  // GPipe's M is one of the DP's
  }
}

TEST(UmpipeSearch, SameSeedSamePlanWhateverTheThreads) {
  std::mt19937 rng(11);
  const ResolvedScenario setup = small_setup(rng, 4, 24);
  UmpipeSearchOptions options;
  options.dgap.population = 64;
  options.dgap.generations = 20;
  options.threads = 1;
  const UmpipeSearchResult one = search_umpipe(setup, options);
  options.threads = 4;
  const UmpipeSearchResult four = search_umpipe(setup, options);
  EXPECT_EQ(one.best, four.best);
  EXPECT_EQ(one.dgap.history, four.dgap.history);
}

TEST(UmpipeSearch, OneFOneBBaselineFollowsTheClosedForm) {
  // Uniform stages, no communication: (M + K - 1)(t_f + t_b), whatever the iterations.
  for (int K : {1, 3, 5}) {
    for (int M : {1, 4, 9}) {
      ResolvedScenario setup = uniform_pipeline(K, M, 0.01, 0.02);
      setup.training.iterations = 3;
      const double expected = (M + K - 1) * 0.03;
      EXPECT_NEAR(one_f_one_b_seconds(setup), expected, 1e-12 * expected) << K << " " << M;
    }
  }
}

TEST(UmpipeSearch, RejectsWhatItCannotSearch) {
  ResolvedScenario setup = uniform_pipeline(1, 1, 0.01, 0.02, 1);
  UmpipeSearchOptions options;
  EXPECT_THROW(search_umpipe(setup, options), InputError);  // 1 stage, batch 1
  setup = uniform_pipeline(2, 4, 0.01, 0.02);
  options.dgap.generations = 0;
  EXPECT_THROW(search_umpipe(setup, options), InputError);
  options = {};
  options.dgap.population = 1;
  EXPECT_THROW(search_umpipe(setup, options), InputError);
  options = {};
  options.dgap.max_microbatches = setup.training.global_batch + 1;
  EXPECT_THROW(search_umpipe(setup, options), InputError);
  options = {};
  setup.training.data_parallel = 2;
  EXPECT_THROW(search_umpipe(setup, options), InputError);
}

// Three stages with different shapes: a fixed cost per microbatch on the first, pure
// per-sample work on the last, a link with latency.
constexpr const char* kScenario = R"(
name: "plan-cli"
cluster {
  nodes: 1
  gpus_per_node: 3
  gpu { name: "sim" peak_tflops: 100 memory_gib: 80 }
  intra_node { bandwidth_gbytes_per_s: 16 latency_us: 150 }
}
model {
  layers { name: "a" fwd_fixed_ms: 6 fwd_per_sample_ms: 0.3 bwd_fixed_ms: 12 bwd_per_sample_ms: 0.6
           activation_bytes: 2000000 }
  layers { name: "b" fwd_fixed_ms: 1 fwd_per_sample_ms: 1.0 bwd_fixed_ms: 2 bwd_per_sample_ms: 2.0
           activation_bytes: 2000000 }
  layers { name: "c" fwd_fixed_ms: 0.1 fwd_per_sample_ms: 1.5 bwd_fixed_ms: 0.2 bwd_per_sample_ms: 3.0 }
}
training { global_batch: 12 microbatches: 4 }
schedule { kind: ONE_F_ONE_B stages: 3 }
)";

constexpr const char* kSmall = "--search umpipe --population 48 --generations 30 --threads 2";

TEST(UmpipePlanCli, JsonHasTheBestPlanAndEveryBaseline) {
  TempDir dir;
  const auto scenario = dir.write("s.textproto", kScenario);
  const auto r = run_pipetwin("plan " + scenario.string() + " " + kSmall + " --seed 5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // no progress bar off a terminal
  const json j = json::parse(r.out);
  const double best = j.at("best_s").get<double>();
  EXPECT_GT(best, 0);
  for (const char* name : {"gpipe", "one_f_one_b", "local_greedy", "global_dp"}) {
    ASSERT_TRUE(j.at("baselines").contains(name)) << name;
    EXPECT_GT(j["baselines"][name].get<double>(), 0) << name;
    EXPECT_NEAR(j.at("gains")[name].get<double>(), j["baselines"][name].get<double>() / best - 1,
                1e-12);
  }
  for (const char* name : {"gpipe", "local_greedy", "global_dp"}) {
    EXPECT_LE(best, j["baselines"][name].get<double>()) << name;
  }
  EXPECT_FALSE(j["baselines"].contains("exhaustive"));  // 2^66 plans
  EXPECT_EQ(j.at("generations"), 30);
  EXPECT_EQ(j.at("population"), 48);
  EXPECT_EQ(j.at("seed"), 5);
  ASSERT_EQ(j.at("plan").size(), 3u);
  for (int s = 0; s < 3; ++s) {
    const json& stage = j["plan"][s];
    EXPECT_EQ(stage.at("stage"), s);
    for (const char* direction : {"forward_sizes", "backward_sizes"}) {
      int total = 0;
      for (const json& size : stage.at(direction)) {
        EXPECT_GT(size.get<int>(), 0);
        total += size.get<int>();
      }
      EXPECT_EQ(total, 12) << direction;
    }
  }
  EXPECT_EQ(j.at("history_s").size(), 31u);

  // Same seed, same answer.
  const auto again = run_pipetwin("plan " + scenario.string() + " " + kSmall + " --seed 5 --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(json::parse(again.out).at("plan"), j.at("plan"));
  EXPECT_EQ(json::parse(again.out).at("best_s"), j.at("best_s"));
}

TEST(UmpipePlanCli, SmallSpacesAreSearchedExhaustively) {
  TempDir dir;
  const auto scenario = dir.write("s.textproto", kScenario);
  const auto r =
      run_pipetwin("plan " + scenario.string() + " " + kSmall +
                   " --json --set training.global_batch=4 --set training.microbatches=2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);  // 8^6 = 262144 plans: over the limit of 200k
  EXPECT_FALSE(j["baselines"].contains("exhaustive"));
  const auto capped = run_pipetwin("plan " + scenario.string() + " " + kSmall +
                                   " --json --set training.global_batch=4 "
                                   "--set training.microbatches=2 --max-microbatches 3");
  ASSERT_EQ(capped.exit_code, 0) << capped.err;
  const json k = json::parse(capped.out);  // 7^6 = 117649 plans
  ASSERT_TRUE(k["baselines"].contains("exhaustive"));
  EXPECT_EQ(k["best_s"], k["baselines"]["exhaustive"]);
}

TEST(UmpipePlanCli, TableNamesEveryBaseline) {
  TempDir dir;
  const auto scenario = dir.write("s.textproto", kScenario);
  const auto r = run_pipetwin("plan " + scenario.string() + " " + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text :
       {"GPipe, 4 equal microbatches", "1F1B, 4 equal microbatches", "local greedy",
        "global greedy DP", "iteration time", "UMPIPE speed-up", "forward / backward"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
}

TEST(UmpipePlanCli, WrittenPlanSimulatesInThePredictedTime) {
  TempDir dir;
  const auto scenario = dir.write("s.textproto", kScenario);
  const auto plan_file = dir.path() / "plan.textproto";
  const auto r =
      run_pipetwin("plan " + scenario.string() + " " + kSmall +
                   " --json --set training.global_batch=16 --write-plan " + plan_file.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_TRUE(std::filesystem::exists(plan_file));
  EXPECT_FALSE(std::filesystem::exists(plan_file.string() + ".tmp"));
  const std::string text = testing::read_all(plan_file);
  EXPECT_NE(text.find("kind: UMPIPE"), std::string::npos) << text;
  EXPECT_NE(text.find("stage_plans"), std::string::npos) << text;
  EXPECT_NE(text.find("global_batch: 16"), std::string::npos) << text;  // the --set stays

  const auto sim = run_pipetwin("simulate " + plan_file.string() + " --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const double simulated = json::parse(sim.out).at("iteration_time_s").get<double>();
  const double best = j.at("best_s").get<double>();
  EXPECT_NEAR(simulated, best, 1e-9 * best);

  // And the written file can be planned again: the same scenario, now UMPIPE.
  const auto replan = run_pipetwin("plan " + plan_file.string() + " " + kSmall + " --json");
  ASSERT_EQ(replan.exit_code, 0) << replan.err;
  EXPECT_EQ(json::parse(replan.out).at("best_s"), j.at("best_s"));
}

TEST(UmpipePlanCli, BadInputExitsTwo) {
  TempDir dir;
  const auto scenario = dir.write("s.textproto", kScenario);
  const std::string path = scenario.string();
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"--search magic", "unknown search"},
      {"--search umpipe --generations 0", "nothing to search"},
      {"--search umpipe --population 1", "nothing to search"},
      {"--search umpipe --set schedule.stages=1 --set training.global_batch=1 "
       "--set training.microbatches=1",
       "nothing to search"},
      {"--search umpipe --max-microbatches 13", "too many microbatches"},
      {"--search umpipe --set training.data_parallel=2 --set cluster.gpus_per_node=6",
       "data_parallel"},
      {"", "--search"},
  };
  for (const Case& c : cases) {
    const auto r = run_pipetwin("plan " + path + " " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << c.args;
  }
  // Nothing written when the search cannot run.
  const auto out = dir.path() / "never.textproto";
  EXPECT_EQ(
      run_pipetwin("plan " + path + " --search umpipe --generations 0 --write-plan " + out.string())
          .exit_code,
      2);
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace pipetwin
