// `pipetwin goodput` end to end on shipped scenarios: the figures it promises (the job's MTTF,
// ETTR inside Llama 3's published "above 90%"), its exact cases (no failures, an asynchronous
// checkpoint under compute) and the Monte Carlo's agreement with the closed form.
#include "app/goodput_run.h"

#include <gtest/gtest.h>

#include <cmath>

namespace pipetwin {
namespace {

GoodputRun goodput(const std::string& scenario, std::vector<std::string> overrides,
                   int32_t runs = 0) {
  GoodputRequest request;
  request.scenario = scenario;
  request.overrides = std::move(overrides);
  request.tokens = 15.6e12;
  request.monte_carlo_runs = runs;
  return run_goodput(request);
}

constexpr char kLlama405b[] = "builtin:llama3-405b-16384gpu";

// Meta's research clusters (arXiv 2410.21680): 6.50 failures per 1,000 node-days; its 16,384-GPU
// job of 2,048 nodes fails every 1.80 h.
TEST(GoodputRun, TheJobsMttfIsOneOverNodesTimesTheRate) {
  const GoodputRun run = goodput(kLlama405b, {"run.failures.per_1000_node_days=6.5"});
  EXPECT_EQ(run.gpus, 16384);
  EXPECT_EQ(run.nodes, 2048);
  EXPECT_NEAR(run.mttf_h, 1.80, 0.005);
  EXPECT_DOUBLE_EQ(run.mttf_h, 24000 / (6.5 * 2048));
}

// Llama 3's own rates (419 unexpected interruptions in 54 days on these 16,384 GPUs) and its
// checkpoint behaviour (synchronous writes to 2 TB/s of storage): the ETTR Meta reports as
// "above 90%".
TEST(GoodputRun, Llama3At16kGpusTrainsAboveNinetyPercent) {
  const GoodputRun run = goodput(kLlama405b, {}, 2000);
  EXPECT_NEAR(run.mttf_h, 54.0 * 24 / 419, 1e-9);
  EXPECT_EQ(run.plan.steps, static_cast<int64_t>(std::ceil(15.6e12 / (2048.0 * 8192))));
  EXPECT_GT(run.estimate.ettr, 0.90);
  EXPECT_LT(run.estimate.ettr, 0.99);
  // 405B parameters of 2 + 12 bytes (bf16 weights, fp32 master and Adam's moments).
  EXPECT_NEAR(run.checkpoint.bytes / 14 / 405e9, 1, 0.01);
  EXPECT_NEAR(run.checkpoint.write_s, run.checkpoint.bytes / 2e12, 1e-9);
  EXPECT_NEAR(run.monte_carlo.mean_s / run.estimate.expected_s, 1, 0.02);
  const nlohmann::json j = run.json();
  for (const char* key :
       {"step_s", "steps", "mttf_h", "checkpoint_interval_s", "checkpoint_write_s", "ettr", "days",
        "gpu_hours", "cost", "monte_carlo"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(j["days"].get<double>(), run.estimate.expected_s / 86400);
}

TEST(GoodputRun, WithoutFailuresTheRunTakesItsStepsExactly) {
  const GoodputRun run =
      goodput("builtin:llama3-8b-64gpu", {"run.failures.per_1000_node_days=0"}, 100);
  EXPECT_EQ(run.estimate.expected_s, static_cast<double>(run.plan.steps) * run.step_s);
  EXPECT_EQ(run.estimate.ettr, 1);
  EXPECT_EQ(run.monte_carlo.p50_s, run.estimate.expected_s);  // every run the same
  EXPECT_NEAR(run.monte_carlo.mean_s, run.estimate.expected_s, 1e-12 * run.estimate.expected_s);
  EXPECT_TRUE(std::isinf(run.mttf_h));
}

// An asynchronous checkpoint whose persist fits in the interval stops training for its
// snapshot only: the GPU's share of the state over the host link.
TEST(GoodputRun, AnAsynchronousCheckpointUnderComputeCostsItsSnapshot) {
  const GoodputRun run = goodput("builtin:llama3-8b-64gpu", {"run.failures.per_1000_node_days=0",
                                                             "run.checkpoint.interval_steps=100",
                                                             "run.checkpoint.asynchronous=true"});
  ASSERT_LT(run.checkpoint.write_s, 100 * run.step_s);
  EXPECT_GT(run.checkpoint.snapshot_s, 0);
  EXPECT_LT(run.checkpoint.snapshot_s, run.checkpoint.write_s);
  const double checkpoints = std::ceil(run.plan.steps / 100.0) - 1;
  EXPECT_DOUBLE_EQ(run.estimate.expected_s, static_cast<double>(run.plan.steps) * run.step_s +
                                                checkpoints * run.checkpoint.snapshot_s);
}

// The report's curves: ETTR peaks at the chosen interval and falls with the cluster's size;
// more replicas train in fewer days.
TEST(GoodputRun, CurvesForTheReport) {
  GoodputRequest request;
  request.scenario = "builtin:llama3-8b-64gpu";
  request.tokens = 1e12;
  request.monte_carlo_runs = 0;
  request.curves = true;
  const GoodputRun run = run_goodput(request);
  double best = 0;
  for (const auto& [interval, ettr] : run.ettr_by_interval_s) best = std::max(best, ettr);
  EXPECT_DOUBLE_EQ(best, run.estimate.ettr);
  ASSERT_GE(run.ettr_by_gpus.size(), 3u);
  for (size_t i = 1; i < run.ettr_by_gpus.size(); ++i) {
    EXPECT_LT(run.ettr_by_gpus[i].second, run.ettr_by_gpus[i - 1].second);
  }
  ASSERT_GE(run.days_by_gpus.size(), 3u);
  for (size_t i = 1; i < run.days_by_gpus.size(); ++i) {
    EXPECT_GT(run.days_by_gpus[i].first, run.days_by_gpus[i - 1].first);
    EXPECT_LT(run.days_by_gpus[i].second, run.days_by_gpus[i - 1].second);
  }
}

}  // namespace
}  // namespace pipetwin
