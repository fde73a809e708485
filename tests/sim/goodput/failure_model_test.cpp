// Failure rates scaled to a job: Llama 3's table gives back its own 54 days / 419
// interruptions on its own cluster, and Meta's research-cluster rate gives the MTTFs quoted for
// 16,384 and 131,072 GPUs.
#include "sim/goodput/failure_model.h"

#include <gtest/gtest.h>

#include <cmath>

namespace pipetwin {
namespace {

TEST(FailureModel, Llama3TableGivesBackItsOwnSnapshot) {
  const FailureModel model = llama3_failure_model();
  EXPECT_EQ(model.causes.size(), 18u);
  // 419 interruptions in 54 days on 16,384 GPUs over 2,048 nodes.
  EXPECT_DOUBLE_EQ(job_mttf_hours(model, 16'384, 2'048), 54.0 * 24 / 419);
  // The GPU-side causes: 148 + 72 + 19 + 17 + 6 + 6; the node-side ones the other 151.
  EXPECT_DOUBLE_EQ(job_failures_per_hour(model, 16'384, 0), 268 / (54.0 * 24));
  EXPECT_DOUBLE_EQ(job_failures_per_hour(model, 0, 2'048), 151 / (54.0 * 24));
}

TEST(FailureModel, RatesScaleWithTheJob) {
  const FailureModel model = llama3_failure_model();
  // Eight times the GPUs and nodes, eight times the failures.
  EXPECT_DOUBLE_EQ(job_failures_per_hour(model, 131'072, 16'384),
                   8 * job_failures_per_hour(model, 16'384, 2'048));
  // Nodes of 4 GPUs: the node-side causes double, the GPU-side ones stay.
  EXPECT_DOUBLE_EQ(job_failures_per_hour(model, 16'384, 4'096), (268 + 2 * 151) / (54.0 * 24));
}

TEST(FailureModel, ResearchClusterRateGivesThePublishedMttf) {
  const FailureModel model = node_failure_model(6.50);
  // 6.50 per 1,000 node-days: 1,000 * 24 / (6.50 * nodes) hours.
  const double mttf_16k = job_mttf_hours(model, 16'384, 2'048);
  const double mttf_131k = job_mttf_hours(model, 131'072, 16'384);
  EXPECT_DOUBLE_EQ(mttf_16k, 24'000 / (6.50 * 2'048));
  EXPECT_DOUBLE_EQ(mttf_131k, 24'000 / (6.50 * 16'384));
  EXPECT_NEAR(mttf_16k, 1.8028, 1e-4);
  EXPECT_NEAR(mttf_131k, 0.22535, 2e-5);
  // The GPU count does not matter to a per-node cause.
  EXPECT_DOUBLE_EQ(job_mttf_hours(model, 1, 2'048), mttf_16k);
}

TEST(FailureModel, NoCausesNeverFail) {
  EXPECT_EQ(job_failures_per_hour(FailureModel{}, 16'384, 2'048), 0);
  EXPECT_TRUE(std::isinf(job_mttf_hours(FailureModel{}, 16'384, 2'048)));
  EXPECT_TRUE(std::isinf(job_mttf_hours(node_failure_model(6.50), 0, 0)));
}

}  // namespace
}  // namespace pipetwin
