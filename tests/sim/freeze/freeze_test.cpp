// FreezePipe: the AutoFreeze rule on hand-made gradients, the repartition against brute
// force, migration bytes against the parameters that moved, a training run as the sum of
// its phases, and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "cli_runner.h"
#include "sim/driver/build_program.h"
#include "sim/freeze/auto_freeze.h"
#include "sim/freeze/gradient_norms.h"
#include "sim/freeze/training_run.h"
#include "sim/partition/balanced_partition.h"
#include "sim/scenario/freeze_log.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

TEST(AutoFreeze, NothingFreezesOnAConstantGradient) {
  const std::vector<double> g(8, 3.0);
  EXPECT_EQ(apply_auto_freeze(g, g, 0, {50, 1.0}), 0);
  EXPECT_EQ(apply_auto_freeze(g, g, 3, {50, 1.0}), 3);
}

// r = [0, 0, 0, 0.5, 0.6, 0.7, 0.8, 0.9]: the median is 0.55, the first layer at or above
// it is layer 4, so layers 0-3 may freeze; the step limit caps it.
TEST(AutoFreeze, FreezesThePrefixBeforeTheFirstChangingLayerWithinTheStepLimit) {
  const std::vector<double> previous(8, 1.0);
  const std::vector<double> current = {1, 1, 1, 0.5, 0.4, 0.3, 0.2, 0.1};
  EXPECT_EQ(apply_auto_freeze(previous, current, 0, {50, 1.0}), 4);
  EXPECT_EQ(apply_auto_freeze(previous, current, 0, {50, 0.25}), 2);  // floor(0.25 * 8)
  EXPECT_EQ(apply_auto_freeze(previous, current, 0, {50, 0.01}), 1);  // at least one
  // Already frozen layers take no part: over layers 2..7, r = [0, .5, .6, .7, .8, .9] and
  // the median 0.65 first reached at layer 5.
  EXPECT_EQ(apply_auto_freeze(previous, current, 2, {50, 1.0}), 5);
  // A lower percentile is a lower threshold: at the 0th, r = 0 everywhere qualifies.
  EXPECT_EQ(apply_auto_freeze(previous, current, 0, {0, 1.0}), 0);
}

TEST(AutoFreeze, PercentileInterpolatesLikeNumpy) {
  EXPECT_DOUBLE_EQ(percentile_of({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile_of({1, 2, 3, 4, 5}, 90), 4.6);
  EXPECT_DOUBLE_EQ(percentile_of({7}, 30), 7);
}

// Synthetic gradients: front layers settle first, so the prefix grows over the run and the
// events are the same for the same seed.
TEST(FreezeEvents, SyntheticGradientsFreezeAGrowingPrefixDeterministically) {
  FreezeSpec spec;
  spec.enabled = true;
  spec.interval_iterations = 20;
  spec.synthetic = SyntheticGradientModel{};
  spec.synthetic->time_constant = 40;
  const auto events = freeze_events(spec, 12, 1000);
  ASSERT_FALSE(events.empty());
  for (size_t k = 1; k < events.size(); ++k) {
    EXPECT_GT(events[k].iteration, events[k - 1].iteration);
    EXPECT_GT(events[k].frozen_layers, events[k - 1].frozen_layers);
  }
  EXPECT_LE(events.back().frozen_layers, 11);  // one layer always trains
  const auto again = freeze_events(spec, 12, 1000);
  ASSERT_EQ(again.size(), events.size());
  for (size_t k = 0; k < events.size(); ++k) EXPECT_EQ(again[k].iteration, events[k].iteration);
}

// Found by fuzzing freeze logs: an interval near the largest int32 overflowed the count of
// intervals. Now no event falls after the run, whatever the interval.
TEST(FreezeEvents, HugeIntervalsNeitherOverflowNorFreezeAfterTheRun) {
  FreezeSpec spec;
  spec.enabled = true;
  spec.log = FreezeLog{};
  spec.log->layers = 4;
  // Front layers whose gradients vanish: the rule freezes them one interval after another.
  spec.log->norms = {{9.5, 8.25, 7, 6}, {1e-3, 8, 6.5, 5.9}, {0, 0, 6, 5.8}, {0, 0, 0, 5.7}};
  int events = 0;
  for (int32_t interval : {std::numeric_limits<int32_t>::max(), 1 << 30, 600, 1}) {
    spec.interval_iterations = spec.log->interval_iterations = interval;
    for (int32_t iterations : {1, 3, 1000, std::numeric_limits<int32_t>::max()}) {
      for (const FreezeEvent& e : freeze_events(spec, 4, iterations)) {
        EXPECT_GT(e.iteration, 0);
        EXPECT_LE(e.iteration, iterations) << "interval " << interval;
        ++events;
      }
    }
  }
  EXPECT_GT(events, 0);  // some froze, so the bound was tested
}

ResolvedScenario small_model(int stages, const std::vector<double>& fwd_s) {
  ResolvedScenario setup = testing::uniform_setup(proto::GPIPE, stages, 4, 1e-3, 2e-3);
  setup.model.layers.clear();
  for (size_t l = 0; l < fwd_s.size(); ++l) {
    ModelLayer layer;
    layer.name = "l" + std::to_string(l);
    layer.fwd.seconds_per_sample = fwd_s[l];
    layer.bwd.seconds_per_sample = 2 * fwd_s[l];
    layer.parameter_bytes = 4000 * static_cast<int64_t>(l + 1);
    if (l + 1 < fwd_s.size()) layer.consumers = {static_cast<int>(l) + 1};
    setup.model.layers.push_back(layer);
  }
  setup.freeze.enabled = true;
  setup.freeze.compress = false;
  return setup;
}

// Every contiguous split into `parts`: the smallest possible slowest part.
double brute_force_bottleneck(const std::vector<double>& times, int parts) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<int32_t> counts;
  std::function<void(int, int)> split = [&](int first, int left) {
    if (left == 1) {
      counts.push_back(static_cast<int32_t>(times.size()) - first);
      best = std::min(best, bottleneck_of(times, counts));
      counts.pop_back();
      return;
    }
    for (int n = 1; first + n + left - 1 <= static_cast<int>(times.size()); ++n) {
      counts.push_back(n);
      split(first + n, left - 1);
      counts.pop_back();
    }
  };
  split(0, parts);
  return best;
}

// After a freeze the rebalanced placement is optimal for the new costs (frozen layers
// cost their forward only), whenever it is the one kept.
TEST(FreezeRepartition, BalancedForTheNewCostsAsBruteForceFinds) {
  std::mt19937 rng(3);
  int compared = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int layers = std::uniform_int_distribution<int>(3, 9)(rng);
    const int stages = std::uniform_int_distribution<int>(2, std::min(layers, 4))(rng);
    std::vector<double> fwd;
    for (int l = 0; l < layers; ++l)
      fwd.push_back(std::uniform_real_distribution<double>(1e-4, 1e-3)(rng));
    const ResolvedScenario base = small_model(stages, fwd);
    const int frozen = std::uniform_int_distribution<int>(1, layers - 1)(rng);
    const PhasePlan plan = plan_phase(base, frozen, {});
    const std::vector<double> times = layer_times(phase_setup(base, plan));
    ResolvedScenario unfrozen_plan_setup = phase_setup(base, plan);
    unfrozen_plan_setup.schedule.partition.clear();
    const std::vector<int32_t> balanced = place_layers(unfrozen_plan_setup);
    if (plan.partition != balanced) continue;  // the original placement simulated faster
    ++compared;
    EXPECT_NEAR(bottleneck_of(times, plan.partition), brute_force_bottleneck(times, stages), 1e-15)
        << "trial " << trial;
  }
  EXPECT_GE(compared, 20);
}

// Moving from [2, 2] to [3, 1] moves layer 2 (12,000 fp32 bytes = 3,000 parameters) from
// gpu1 to gpu0: with fp32 Adam, 4 bytes of weights + 8 of moments per parameter; frozen
// layers move their weights only.
TEST(FreezeMigration, BytesAreTheParametersThatMoved) {
  ResolvedScenario base = small_model(2, {1e-3, 1e-3, 1e-3, 1e-3});
  base.training.optimizer = proto::ADAM;
  PhasePlan from{0, 2, 1, {2, 2}}, to{1, 2, 1, {3, 1}};
  const Program moves = migration_program(base, from, to);
  int64_t total = 0;
  for (const Instruction& i : moves.instructions) {
    if (i.op != Op::kMigrate) continue;
    EXPECT_EQ(i.device, 1);
    EXPECT_EQ(i.peer_device, 0);
    total += i.bytes;
  }
  EXPECT_EQ(total, 3000 * (4 + 8));
  to.frozen_layers = 3;  // layer 2 frozen: weights only
  total = 0;
  for (const Instruction& i : migration_program(base, from, to).instructions) {
    if (i.op == Op::kMigrate) total += i.bytes;
  }
  EXPECT_EQ(total, 3000 * 4);
  // Compressing [2, 2] x 1 into [4] x 2: gpu0 gets layers 2 and 3 from gpu1; gpu1 (now
  // replica 1's only stage) gets layers 0 and 1 from gpu0.
  const Program compress = migration_program(base, from, PhasePlan{0, 1, 2, {4}});
  total = 0;
  for (const Instruction& i : compress.instructions) {
    if (i.op == Op::kMigrate) total += i.bytes;
  }
  EXPECT_EQ(total, (1000 + 2000 + 3000 + 4000) * 12);
}

// A fixed freeze schedule: the training time is the phases' iterations times their
// iteration times plus the migrations, and each phase's iteration time is that of the
// plan simulated on its own.
TEST(FreezeTraining, TrainingTimeIsTheSumOfThePhases) {
  ResolvedScenario base = small_model(2, {1e-3, 2e-3, 1e-3, 3e-3, 1e-3, 1e-3});
  base.training.iterations = 100;
  base.freeze.at = {{30, 2}, {60, 4}};
  base.freeze.compress = true;
  const TrainingRun run = simulate_training(base, {});
  ASSERT_EQ(run.phases.size(), 3u);
  double sum = 0;
  for (const TrainingPhase& p : run.phases) {
    const SimulationResult alone = simulate_setup(phase_setup(base, p.plan), {});
    const double time = *std::max_element(alone.times.end_s.begin(), alone.times.end_s.end());
    EXPECT_DOUBLE_EQ(p.iteration_time_s, time);
    sum += p.iterations * p.iteration_time_s;
  }
  for (const Migration& m : run.migrations) sum += m.seconds;
  EXPECT_NEAR(run.training_time_s, sum, 1e-12 * sum);
  EXPECT_EQ(run.phases[0].iterations, 30);
  EXPECT_EQ(run.phases[1].iterations, 30);
  EXPECT_EQ(run.phases[2].iterations, 40);
  EXPECT_LT(run.phases[2].iteration_time_s, run.phases[0].iteration_time_s);
}

// Compression is kept only when the iteration, all-reduce included, is no slower: the same
// frozen model compresses over a fast link and stays a pipeline over a slow one, where two
// replicas' all-reduce of large weights costs more than the compute they share.
TEST(FreezeCompression, OnlyWhenTheAllReduceDoesNotCostMoreThanItSaves) {
  ResolvedScenario base = small_model(2, {1e-3, 1e-3, 1e-3, 1e-3});
  base.freeze.compress = true;
  for (ModelLayer& layer : base.model.layers) layer.parameter_bytes = 400'000'000;
  base.cluster.intra_node = {1e15, 0.0};
  const PhasePlan fast = plan_phase(base, 3, {});
  EXPECT_EQ(fast.stages, 1);
  EXPECT_EQ(fast.data_parallel, 2);
  base.cluster.intra_node = {1e9, 0.0};  // 1 GB/s: seconds of all-reduce per iteration
  const PhasePlan slow = plan_phase(base, 3, {});
  EXPECT_EQ(slow.stages, 2);
  EXPECT_EQ(slow.data_parallel, 1);
  const auto iteration = [&](const PhasePlan& plan) {
    const SimulationResult r = simulate_setup(phase_setup(base, plan), {});
    return *std::max_element(r.times.end_s.begin(), r.times.end_s.end());
  };
  EXPECT_LT(iteration(slow), iteration(fast));  // on the slow link, compressing would lose
}

// A two-layer GPipe scenario on two devices, without its freeze block.
std::string two_layer_scenario(int iterations) {
  return R"(name: "f"
cluster { nodes: 1 gpus_per_node: 2 gpu { name: "g" peak_tflops: 100 memory_gib: 80 }
  intra_node { bandwidth_gbytes_per_s: 100 latency_us: 1 } }
model { layers { name: "a" fwd_ms: 1 bwd_ms: 2 } layers { name: "b" fwd_ms: 1 bwd_ms: 2 } layer_batch: 4 }
training { global_batch: 16 microbatches: 4 iterations: )" +
         std::to_string(iterations) + R"( }
schedule { kind: GPIPE stages: 2 }
)";
}

// A log of a short real run stretches over a long simulated one: its k-th interval ends at
// (k + 1) x the scenario's interval when the freeze block sets one.
TEST(FreezeEvents, ALogsIntervalsLandOnTheScenariosInterval) {
  const testing::TempDir dir;
  dir.write("run.freezelog",
            "layers 2\ninterval_iterations 10\ninterval 0 5 9\ninterval 1 5 1\n"
            "interval 2 5 9\ninterval 3 5 1\n");
  const std::string head = two_layer_scenario(1000);
  for (const auto& [block, first] :
       {std::pair<std::string, int>{"freeze { log: \"run.freezelog\" }", 20},
        {"freeze { log: \"run.freezelog\" interval_iterations: 250 }", 500}}) {
    const std::string path = dir.write("f.textproto", head + block + "\n").string();
    const testing::CliResult r = testing::run_pipetwin("simulate " + path + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    ASSERT_FALSE(j["freeze_events"].empty()) << block;
    EXPECT_EQ(j["freeze_events"][0]["iteration"].get<int>(), first) << block;
  }
}

TEST(FreezeCli, JsonReportsTheRunAndItsEvents) {
  const testing::CliResult r = testing::run_pipetwin("simulate builtin:freezepipe-gpt-8gpu --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["training_time_s"].get<double>(), 0);
  ASSERT_FALSE(j["freeze_events"].empty());
  double phases = 0;
  for (const auto& p : j["phases"]) {
    phases += p["iterations"].get<double>() * p["iteration_time_s"].get<double>();
  }
  double migrations = 0;
  for (const auto& e : j["freeze_events"]) {
    EXPECT_GT(e["iteration_time_before_s"].get<double>(), 0);
    EXPECT_GT(e["iteration_time_after_s"].get<double>(), 0);
    migrations += e["migration_s"].get<double>();
  }
  EXPECT_NEAR(j["training_time_s"].get<double>(), phases + migrations, 1e-9 * phases);
}

TEST(FreezeCli, BadInputNamesTheField) {
  const testing::TempDir dir;
  const std::string scenario = two_layer_scenario(100);
  const struct {
    std::string freeze, field, problem;
  } cases[] = {
      {"freeze { percentile: -5 synthetic {} }", "freeze.percentile", "must be in [0, 100]"},
      {"freeze { interval_iterations: 0 synthetic {} }", "freeze.interval_iterations",
       "must be positive"},
      {"freeze { }", "freeze", "no source of freezing"},
      {"freeze { at { iteration: 5 frozen_layers: 1 } synthetic {} }", "freeze",
       "at most one of at, log, synthetic"},
      {"freeze { log: \"other.freezelog\" }", "freeze.log",
       "the log is for a model of 5 layers, this scenario's has 2"},
  };
  dir.write("other.freezelog", "layers 5\ninterval_iterations 10\ninterval 0 1 1 1 1 1\n");
  for (const auto& c : cases) {
    const std::string path = dir.write("f.textproto", scenario + c.freeze + "\n").string();
    const testing::CliResult r = testing::run_pipetwin("simulate " + path);
    EXPECT_EQ(r.exit_code, 2) << c.freeze << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(path + ":7"));
    EXPECT_THAT(r.err, HasSubstr(c.field));
    EXPECT_THAT(r.err, HasSubstr(c.problem));
  }
}

TEST(FreezeLogFormat, RoundTripsAndNamesTheBadLine) {
  FreezeLog log{3, 10, {{1, 2, 3}, {0.5, 1.5, 2.5}}};
  const FreezeLog back = parse_freeze_log(format_freeze_log(log), "run.freezelog", 3);
  EXPECT_EQ(back.norms, log.norms);
  EXPECT_EQ(back.interval_iterations, 10);
  try {
    parse_freeze_log("layers 3\ninterval_iterations 10\ninterval 0 1 2\n", "x.freezelog", 3);
    FAIL() << "accepted 2 norms for 3 layers";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("x.freezelog:3"));
    EXPECT_THAT(e.what(), HasSubstr("2 norms for 3 layers"));
  }
}

}  // namespace
}  // namespace pipetwin
