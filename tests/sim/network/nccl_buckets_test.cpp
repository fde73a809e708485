// Gradient buckets under NCCL's collectives: an 8-stage GPT on 1,024 H100s (128 DGX nodes,
// 128 data-parallel replicas, each stage's group one GPU per node). Priced as textbook rings,
// every 25 MB bucket pays 2 x 127 network latencies; NCCL's trees pay 2 log2(128) for such
// buckets, and Megatron-Core's default (buckets of max(40M, 1M x DP) parameters, on each
// device's first model chunk) pays a few of its rings' latencies. Under NCCL's own model the default still costs
// its buckets' latencies beyond what the last backward hides (docs/network.md gives the figures).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/scenario/loaded_scenario.h"
#include "sim/driver/simulate.h"

namespace pipetwin {
namespace {

double step_seconds(const std::string& bucket, const std::string& model = "NCCL") {
  std::vector<std::string> set = {"cluster.nodes=128", "training.data_parallel=128",
                                  "training.global_batch=8192", "training.iterations=1",
                                  "cluster.collectives.model=" + model};
  if (!bucket.empty()) set.push_back("training.grad_bucket_mb=" + bucket);
  return simulate(load_scenario("builtin:gpt-8gpu-1f1b", set), {}).times.span_s();
}

TEST(NcclBuckets, NcclsChoicesAndTheDefaultBucketsCostLessThanRings) {
  const double rings = step_seconds("25", "TEXTBOOK");
  const double nccl = step_seconds("25");
  const double megatron_default = step_seconds("");
  EXPECT_LT(nccl, rings);
  EXPECT_LT(megatron_default, nccl);
  // One reduction per stage after the backward is priced alike by both (a ring either way).
  EXPECT_NEAR(step_seconds("0"), step_seconds("0", "TEXTBOOK"), 0.02 * step_seconds("0"));
}

}  // namespace
}  // namespace pipetwin
