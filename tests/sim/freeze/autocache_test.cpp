// AutoCache: a frozen prefix is served from host memory one epoch after it froze, if its
// cache fits; the cached prefix costs exactly the copy of its outputs over the host link;
// a one-stage pipeline's iteration then has its closed form; a run never gets slower; the
// command line reports the cache and refuses bad settings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "sim/driver/build_program.h"
#include "sim/freeze/training_run.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

constexpr double kHostBandwidth = 8e9, kHostLatency = 5e-6;

// One stage (no pipeline: the closed form is a sum), layers with output bytes, a host link.
ResolvedScenario cached_model(int stages, int microbatches, int epoch) {
  ResolvedScenario setup = testing::uniform_setup(proto::GPIPE, stages, microbatches, 1e-3, 2e-3);
  setup.model.layers.clear();
  for (int l = 0; l < 6; ++l) {
    ModelLayer layer;
    layer.name = "l" + std::to_string(l);
    layer.fwd.seconds_per_sample = 1e-4 * (l + 1);
    layer.bwd.seconds_per_sample = 2e-4 * (l + 1);
    layer.activation_bytes_per_sample = 1e5 * (6 - l);
    layer.stash_bytes_per_sample = layer.activation_bytes_per_sample;
    layer.parameter_bytes = 4000;
    if (l + 1 < 6) layer.consumers = {l + 1};
    setup.model.layers.push_back(layer);
  }
  setup.cluster.has_host_link = true;
  setup.cluster.host_link = {kHostBandwidth, kHostLatency};
  setup.cluster.host_memory_bytes = 1e12;
  setup.training.iterations = 100;
  setup.freeze.enabled = true;
  setup.freeze.compress = false;
  setup.freeze.repartition = false;
  setup.freeze.at = {{20, 2}, {40, 4}};
  setup.freeze.cache_epoch_iterations = epoch;
  return setup;
}

// Each prefix serves from one epoch after it froze; a freeze whose epoch would end after
// the run never serves; the cache is an epoch's samples times the prefix's output bytes.
TEST(AutoCache, EachPrefixServesAnEpochAfterItFroze) {
  ResolvedScenario setup = cached_model(1, 4, 30);
  const std::vector<FreezeEvent> freezes = {{0, 0}, {20, 2}, {40, 4}};
  const std::vector<CacheEvent> caches = cache_events(setup, freezes);
  ASSERT_EQ(caches.size(), 2u);
  EXPECT_EQ(caches[0].iteration, 50);
  EXPECT_EQ(caches[0].cached_layers, 2);
  const double samples = 30.0 * setup.training.global_batch;
  EXPECT_EQ(caches[0].bytes, std::llround(samples * 1e5 * 5));  // layer 1's output
  EXPECT_EQ(caches[1].iteration, 70);
  EXPECT_EQ(caches[1].bytes, std::llround(samples * 1e5 * 3));  // layer 3's output
  setup.freeze.cache_epoch_iterations = 61;  // 40 + 61 is past the run's 100 iterations
  ASSERT_EQ(cache_events(setup, freezes).size(), 1u);
  // A cache larger than the nodes' host memory is not built.
  setup.cluster.host_memory_bytes = samples * 1e5 * 4;  // fits layer 3's, not layer 1's
  setup.freeze.cache_epoch_iterations = 30;
  const std::vector<CacheEvent> fitting = cache_events(setup, freezes);
  ASSERT_EQ(fitting.size(), 1u);
  EXPECT_EQ(fitting[0].cached_layers, 4);
}

// One stage, GPipe, M microbatches of b samples, prefix F frozen and C <= F cached: the
// iteration is M (latency + b x bytes / bandwidth) for the cache, M b sum(f_l, l >= C) for
// the forwards and M b sum(g_l, l >= F) for the backwards.
TEST(AutoCache, ACachedPrefixCostsTheCopyOfItsOutputs) {
  const int M = 4;
  const ResolvedScenario base = cached_model(1, M, 10);
  const double b = static_cast<double>(base.training.global_batch) / M;
  for (const auto& [frozen, cached] : {std::pair{2, 2}, {4, 2}, {4, 4}, {5, 3}}) {
    PhasePlan plan;
    plan.frozen_layers = frozen;
    plan.cached_layers = cached;
    plan.stages = 1;
    plan.partition = {6};
    const Program p = build_program(phase_setup(base, plan));
    double expected = M * (kHostLatency + b * 1e5 * (6 - (cached - 1)) / kHostBandwidth);
    for (int l = cached; l < 6; ++l) expected += M * b * 1e-4 * (l + 1);
    for (int l = frozen; l < 6; ++l) expected += M * b * 2e-4 * (l + 1);
    double compute = 0;
    for (const Instruction& ins : p.instructions) {
      if (ins.op == Op::kFwd || ins.op == Op::kBwd) compute += ins.compute_s;
    }
    EXPECT_NEAR(compute, expected, 1e-12) << "frozen " << frozen << " cached " << cached;
  }
}

// The run gains a phase per cache, each no slower than the one before it, and the whole
// run is faster than without the cache.
TEST(AutoCache, ARunWithTheCacheIsFasterAndAddsAPhasePerCache) {
  ResolvedScenario setup = cached_model(2, 4, 10);
  setup.freeze.repartition = true;
  const TrainingRun cached = simulate_training(setup, {});
  setup.freeze.cache_epoch_iterations = 0;
  const TrainingRun plain = simulate_training(setup, {});
  ASSERT_EQ(plain.phases.size(), 3u);
  ASSERT_EQ(cached.phases.size(), 5u);  // 0, 20 freeze, 30 cache, 40 freeze, 50 cache
  const int starts[] = {0, 20, 30, 40, 50};
  const int cached_layers[] = {0, 0, 2, 2, 4};
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(cached.phases[k].first_iteration, starts[k]);
    EXPECT_EQ(cached.phases[k].plan.cached_layers, cached_layers[k]);
  }
  EXPECT_LT(cached.phases[2].iteration_time_s, cached.phases[1].iteration_time_s);
  EXPECT_LT(cached.training_time_s, plain.training_time_s);
}

const char* kScenario = R"(name: "cached"
cluster { preset: "pcie-8xa100" gpus_per_node: 2 }
model { zoo { name: "vgg16" image_size: 32 num_classes: 10 } }
training { global_batch: 128 microbatches: 4 iterations: 1000 }
schedule { kind: GPIPE stages: 2 }
)";

TEST(AutoCacheCli, ReportsTheCacheAndChecksItsFields) {
  const testing::TempDir dir;
  const std::string path =
      dir.write("c.textproto", std::string(kScenario) +
                                   "freeze { at { iteration: 100 frozen_layers: 6 } "
                                   "autocache { epoch_iterations: 390 } }\n")
          .string();
  const testing::CliResult r = testing::run_pipetwin("simulate " + path + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["autocache"]["caches"].size(), 1u);
  EXPECT_EQ(j["autocache"]["caches"][0]["iteration"], 490);
  EXPECT_EQ(j["autocache"]["caches"][0]["cached_layers"], 6);
  // The first 6 layers end with pool2: 128 channels at 8x8 in fp32 per sample, for each of
  // an epoch's 390 x 128 samples.
  EXPECT_EQ(j["autocache"]["caches"][0]["cache_bytes"], 390LL * 128 * 128 * 8 * 8 * 4);
  const testing::CliResult text = testing::run_pipetwin("simulate " + path);
  EXPECT_THAT(text.out, HasSubstr("AutoCache      from iteration 490: 6 layers"));

  const struct {
    std::string freeze, field, problem;
  } cases[] = {
      {"freeze { at { iteration: 5 frozen_layers: 1 } autocache { } }",
       "freeze.autocache.epoch_iterations", "missing"},
      {"freeze { at { iteration: 5 frozen_layers: 1 } autocache { epoch_iterations: 0 } }",
       "freeze.autocache.epoch_iterations", "must be positive"},
  };
  for (const auto& c : cases) {
    const std::string bad = dir.write("bad.textproto", std::string(kScenario) + c.freeze).string();
    const testing::CliResult e = testing::run_pipetwin("simulate " + bad);
    EXPECT_EQ(e.exit_code, 2) << e.err;
    EXPECT_THAT(e.err, HasSubstr(c.field));
    EXPECT_THAT(e.err, HasSubstr(c.problem));
  }
}

}  // namespace
}  // namespace pipetwin
