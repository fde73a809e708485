#include "sim/model/expert_parallel.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace pipetwin {

double hottest_gpu_load(const MoeLayerCost& moe, int32_t expert_parallel) {
  const int32_t per_gpu = moe.experts / expert_parallel;
  // Each expert's share of the tokens, mean 1.
  std::vector<double> share(static_cast<size_t>(moe.experts), 1.0);
  if (moe.tokens_per_expert) {
    const std::vector<double>& tokens = *moe.tokens_per_expert;
    const double total = std::accumulate(tokens.begin(), tokens.end(), 0.0);
    for (size_t e = 0; e < share.size(); ++e) {
      share[e] = tokens[e] * static_cast<double>(moe.experts) / total;
    }
  } else if (moe.router_imbalance > 1) {
    // One expert takes `router_imbalance` times the mean; the others share the rest evenly.
    share.assign(share.size(), (static_cast<double>(moe.experts) - moe.router_imbalance) /
                                   static_cast<double>(moe.experts - 1));
    share[0] = moe.router_imbalance;
  }
  // A capacity factor drops what an expert receives beyond it.
  if (moe.capacity_factor > 0) {
    for (double& s : share) s = std::min(s, moe.capacity_factor);
  }
  double hottest = 0;
  for (int32_t g = 0; g < expert_parallel; ++g) {
    const auto first = share.begin() + static_cast<long>(g) * per_gpu;
    hottest = std::max(hottest, std::accumulate(first, first + per_gpu, 0.0) / per_gpu);
  }
  return hottest;
}

void apply_expert_parallel(ModelSpec& model, int32_t expert_parallel, int32_t tensor_parallel,
                           int32_t expert_tensor_parallel, double utilization_half_batch,
                           bool gathers_routed_copies) {
  // The cost model divides a layer's weights by tensor_parallel afterwards; each GPU holds
  // 1 / (E x ETP) of the experts'.
  const double expert_share = static_cast<double>(tensor_parallel) /
                              (static_cast<double>(expert_parallel) * expert_tensor_parallel);
  // Every MoE layer of a zoo model routes alike (one moe block): its load is worked out once.
  double load = 0;
  for (ModelLayer& layer : model.layers) {
    MoeLayerCost& moe = layer.moe;
    if (moe.experts == 0) continue;
    if (load == 0) load = hottest_gpu_load(moe, expert_parallel);
    const double routed = moe.top_k * moe.expert_flops_per_sample;
    const double extra = routed * (load - 1);
    layer.fwd.flops_per_sample += extra;
    layer.bwd.flops_per_sample += 2 * extra;
    if (layer.bwd_weight) layer.bwd_weight->flops_per_sample += extra;
    // The zoo gave the layer fixed FLOPs for one GEMM of its routed work; each local expert
    // is a GEMM of its own.
    const double local_experts = static_cast<double>(moe.experts / expert_parallel);
    const double fixed = utilization_half_batch * moe.expert_flops_per_sample *
                         (local_experts - static_cast<double>(moe.top_k));
    layer.fwd.fixed_flops += fixed;
    layer.bwd.fixed_flops += 2 * fixed;
    if (layer.bwd_weight) layer.bwd_weight->fixed_flops += fixed;
    layer.parameter_bytes -=
        moe.expert_parameter_bytes -
        std::llround(static_cast<double>(moe.expert_parameter_bytes) * expert_share);
    if (expert_tensor_parallel == 1 && tensor_parallel > 1 && moe.shared_experts == 0) {
      // The MLP's all-reduce (an all-gather and a reduce-scatter of the tokens with sequence
      // parallelism) goes: the experts are whole on every GPU.
      layer.tp_fwd_collectives = std::max(0, layer.tp_fwd_collectives - 1);
      layer.tp_bwd_collectives = std::max(0, layer.tp_bwd_collectives - 1);
      layer.tp_bwd_grad_collectives = std::max(0, layer.tp_bwd_grad_collectives - 1);
    }
    if (expert_tensor_parallel > 1 && expert_tensor_parallel == tensor_parallel &&
        gathers_routed_copies) {
      // The MLP's pair carries the top_k routed copies; shared experts gather the tokens in
      // a pair of their own.
      const double copies =
          static_cast<double>(moe.top_k - 1) * layer.tp_allreduce_bytes_per_sample;
      layer.tp_fwd_extra_bytes_per_sample += copies;
      layer.tp_bwd_extra_bytes_per_sample += copies;
      if (moe.shared_experts > 0) {
        layer.tp_fwd_collectives += 1;
        layer.tp_bwd_collectives += 1;
      }
    }
    if (expert_parallel > 1) {  // dispatch and combine, each pass
      layer.ep_fwd_all_to_alls = 2;
      layer.ep_bwd_all_to_alls = 2;
    }
  }
}

void add_local_expert_sort(ModelSpec& model, int32_t expert_parallel, int32_t tensor_parallel,
                           int32_t expert_tensor_parallel, double bytes_per_s) {
  // The per-sample costs are divided among the T tensor-parallel GPUs afterwards; gathered
  // over them, every GPU sorts all T shares.
  const double gathered =
      expert_tensor_parallel > 1 && expert_tensor_parallel == tensor_parallel ? tensor_parallel : 1;
  constexpr double kReadAndWriteTwice = 4;  // the sort and the sort back, each a copy
  double load = 0;
  for (ModelLayer& layer : model.layers) {
    const MoeLayerCost& moe = layer.moe;
    if (moe.experts == 0 || moe.experts / expert_parallel < 2) continue;
    if (load == 0) load = hottest_gpu_load(moe, expert_parallel);
    const double seconds =
        kReadAndWriteTwice * moe.dispatch_bytes_per_sample * gathered * load / bytes_per_s;
    layer.fwd.seconds_per_sample += seconds;
    layer.bwd.seconds_per_sample += seconds;
  }
}

}  // namespace pipetwin
