// Expert parallelism on a layer's costs: expert weights divided by E exactly, the hottest
// GPU's load from the router's imbalance or a histogram, the per-expert GEMM overhead, and the
// tensor-parallel collectives of experts split or folded, and the sort of received copies by
// local expert.
#include "sim/model/expert_parallel.h"

#include <gtest/gtest.h>

#include <string>

namespace pipetwin {
namespace {

ModelLayer moe_layer(int32_t experts, int32_t top_k) {
  ModelLayer l;
  l.moe.experts = experts;
  l.moe.top_k = top_k;
  l.moe.expert_flops_per_sample = 1e9;
  l.moe.expert_parameter_bytes = 4'000'000 * static_cast<int64_t>(experts);
  l.moe.dispatch_bytes_per_sample = 1e6;
  l.parameter_bytes = l.moe.expert_parameter_bytes + 1'000'000;
  l.fwd.flops_per_sample = top_k * 1e9 + 5e8;
  l.bwd.flops_per_sample = 2 * l.fwd.flops_per_sample;
  l.bwd_weight = LayerCost{};
  l.bwd_weight->flops_per_sample = l.fwd.flops_per_sample;
  return l;
}

TEST(ExpertParallel, DividesExpertWeightsExactly) {
  for (int32_t ep : {1, 2, 4, 8}) {
    ModelSpec spec;
    spec.layers = {moe_layer(8, 2)};
    apply_expert_parallel(spec, ep, 1, 1, 0);
    EXPECT_EQ(spec.layers[0].parameter_bytes, 1'000'000 + 32'000'000 / ep) << ep;
    // Balanced tokens: each GPU computes top_k x its own tokens, whatever E.
    EXPECT_DOUBLE_EQ(spec.layers[0].fwd.flops_per_sample, 2e9 + 5e8) << ep;
    EXPECT_EQ(spec.layers[0].ep_fwd_all_to_alls, ep > 1 ? 2 : 0);
    EXPECT_EQ(spec.layers[0].ep_bwd_all_to_alls, ep > 1 ? 2 : 0);
  }
}

TEST(ExpertParallel, HottestGpuFromTheRouterImbalance) {
  MoeLayerCost moe = moe_layer(8, 2).moe;
  moe.router_imbalance = 3;  // one expert at 3x the mean, the other seven at 5/7
  EXPECT_DOUBLE_EQ(hottest_gpu_load(moe, 1), 1);  // one GPU runs them all
  EXPECT_DOUBLE_EQ(hottest_gpu_load(moe, 8), 3);  // the hot expert alone sets the time
  EXPECT_DOUBLE_EQ(hottest_gpu_load(moe, 2), (3 + 3 * 5.0 / 7) / 4);
  moe.capacity_factor = 1.25;  // tokens beyond 1.25x the mean are dropped
  EXPECT_DOUBLE_EQ(hottest_gpu_load(moe, 8), 1.25);
}

TEST(ExpertParallel, HottestGpuFromAHistogram) {
  MoeLayerCost moe = moe_layer(4, 1).moe;
  moe.tokens_per_expert =
      std::make_shared<const std::vector<double>>(std::vector<double>{10, 30, 40, 20});  // mean 25
  EXPECT_DOUBLE_EQ(hottest_gpu_load(moe, 4), 40.0 / 25);
  EXPECT_DOUBLE_EQ(hottest_gpu_load(moe, 2), 60.0 / 50);  // GPUs hold {10,30} and {40,20}
}

TEST(ExpertParallel, ImbalanceSlowsTheLayerAndEachLocalExpertPaysItsGemmOverhead) {
  ModelSpec spec;
  spec.layers = {moe_layer(8, 2)};
  spec.layers[0].moe.router_imbalance = 3;
  const double half_batch = 0.5;
  for (ModelLayer& l : spec.layers) {  // what the zoo sets: one GEMM's overhead for the layer
    l.fwd.fixed_flops = half_batch * l.fwd.flops_per_sample;
  }
  apply_expert_parallel(spec, 8, 1, 1, half_batch);
  const ModelLayer& l = spec.layers[0];
  EXPECT_DOUBLE_EQ(l.fwd.flops_per_sample, 3 * 2e9 + 5e8);
  EXPECT_DOUBLE_EQ(l.bwd.flops_per_sample, 2 * (2e9 + 5e8) + 2 * 2 * 2e9);
  // One local expert instead of top_k = 2 GEMMs' worth.
  EXPECT_DOUBLE_EQ(l.fwd.fixed_flops, half_batch * (2.5e9 + (1 - 2) * 1e9));
}

// With the experts split like the MLP over T GPUs (ETP = T) Megatron-Core gathers the routed
// copies over the tensor-parallel group: the MLP's all-gather and reduce-scatter carry top_k
// copies of the tokens, shared experts a pair of their own; whole experts (ETP 1) keep the
// attention's alone; the all-gather dispatcher gathers the tokens once.
TEST(ExpertParallel, SplitExpertsGatherEveryRoutedCopyOverTheTensorParallelGroup) {
  const auto tp_layer = [](int32_t top_k, int32_t shared) {
    ModelLayer l = moe_layer(16, top_k);
    l.moe.shared_experts = shared;
    l.tp_fwd_collectives = l.tp_bwd_collectives = 2;  // attention's and the MLP's
    l.tp_bwd_grad_collectives = 2;
    l.tp_allreduce_bytes_per_sample = 1e6;
    return l;
  };
  for (int32_t top_k : {1, 2, 8}) {
    for (int32_t shared : {0, 1}) {
      SCOPED_TRACE("top " + std::to_string(top_k) + " shared " + std::to_string(shared));
      ModelSpec split, folded, gathered;
      split.layers = folded.layers = gathered.layers = {tp_layer(top_k, shared)};
      apply_expert_parallel(split, 4, 2, 2, 0);
      const ModelLayer& s = split.layers[0];
      EXPECT_EQ(s.tp_fwd_collectives, 2 + shared);
      EXPECT_EQ(s.tp_bwd_collectives, 2 + shared);
      // All the bytes of a pass: the attention's 1, the routed copies' top_k, shared's 1.
      EXPECT_DOUBLE_EQ(s.tp_fwd_collectives * 1e6 + s.tp_fwd_extra_bytes_per_sample,
                       (1 + top_k + shared) * 1e6);
      EXPECT_DOUBLE_EQ(s.tp_bwd_extra_bytes_per_sample, s.tp_fwd_extra_bytes_per_sample);
      apply_expert_parallel(folded, 4, 2, 1, 0);
      EXPECT_EQ(folded.layers[0].tp_fwd_collectives, shared > 0 ? 2 : 1);
      EXPECT_EQ(folded.layers[0].tp_fwd_extra_bytes_per_sample, 0);
      apply_expert_parallel(gathered, 4, 2, 2, 0, /*gathers_routed_copies=*/false);
      EXPECT_EQ(gathered.layers[0].tp_fwd_collectives, 2);
      EXPECT_EQ(gathered.layers[0].tp_fwd_extra_bytes_per_sample, 0);
    }
  }
}

// Megatron-Core's alltoall dispatcher sorts what a GPU receives into one block per local
// expert and back (sort_chunks_by_idxs), a read and a write of every copy each way and pass:
// nothing with one local expert, T times the copies when they are gathered over T GPUs, the
// hottest GPU's share under imbalance.
TEST(ExpertParallel, SeveralLocalExpertsSortWhatTheyReceive) {
  const double bytes_per_s = 1e12;
  const auto sorted = [&](int32_t ep, int32_t tp, int32_t etp, double imbalance) {
    ModelSpec spec;
    spec.layers = {moe_layer(8, 2)};  // dispatch_bytes_per_sample 1e6
    spec.layers[0].moe.router_imbalance = imbalance;
    add_local_expert_sort(spec, ep, tp, etp, bytes_per_s);
    EXPECT_DOUBLE_EQ(spec.layers[0].bwd.seconds_per_sample, spec.layers[0].fwd.seconds_per_sample);
    return spec.layers[0].fwd.seconds_per_sample;
  };
  EXPECT_DOUBLE_EQ(sorted(8, 1, 1, 1), 0);  // one expert per GPU: nothing to sort
  EXPECT_DOUBLE_EQ(sorted(4, 1, 1, 1), 4 * 1e6 / bytes_per_s);
  EXPECT_DOUBLE_EQ(sorted(1, 1, 1, 1), 4 * 1e6 / bytes_per_s);
  EXPECT_DOUBLE_EQ(sorted(4, 2, 2, 1), 2 * 4 * 1e6 / bytes_per_s);  // gathered over TP 2
  EXPECT_DOUBLE_EQ(sorted(4, 2, 1, 1), 4 * 1e6 / bytes_per_s);      // folded: not gathered
  // One expert at 3x the mean: the GPU holding it and one other sorts (3 + 5/7) / 2 of it.
  EXPECT_DOUBLE_EQ(sorted(4, 1, 1, 3), (3 + 5.0 / 7) / 2 * 4 * 1e6 / bytes_per_s);
  ModelSpec dense;
  dense.layers = {ModelLayer{}};
  add_local_expert_sort(dense, 4, 1, 1, bytes_per_s);
  EXPECT_DOUBLE_EQ(dense.layers[0].fwd.seconds_per_sample, 0);
}

}  // namespace
}  // namespace pipetwin
