// The resolved model every source (explicit layers, PipeDream profile, zoo) turns into:
// a chain of layers in topological order with per-sample costs and sizes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/spec/cost_curve.h"

namespace pipetwin {

// Cost of one pass of a layer for b samples on a device of `device_flops` FLOP/s:
//   seconds = fixed_s + b * seconds_per_sample
//           + (fixed_flops + b * flops_per_sample) / device_flops
//           + measured(b)                                    (and 0 for b = 0)
// Sources that measured times fill the seconds terms or `points`; sources that count
// FLOPs fill the FLOP terms (device_flops already includes the zoo's efficiency factor).
// A fixed part is what a microbatch costs whatever its size: launches, latency, a GPU
// poorly used at small sizes.
struct LayerCost {
  double seconds_per_sample = 0;
  double flops_per_sample = 0;
  double fixed_s = 0;
  double fixed_flops = 0;
  std::vector<std::pair<double, double>> points;  // measured (batch, seconds)
  // Tensor parallelism: per-sample time every GPU of a stage spends whole (memory-bound
  // kernels on activations that are not split), in seconds_per_sample's place otherwise.
  double undivided_seconds_per_sample = 0;

  CostCurve curve(double device_flops) const {
    CostCurve c = CostCurve::linear(
        fixed_s + fixed_flops / device_flops,
        seconds_per_sample + undivided_seconds_per_sample + flops_per_sample / device_flops);
    if (!points.empty()) c.add(CostCurve::measured(points));
    return c;
  }
  double seconds(double samples, double device_flops) const {
    return curve(device_flops).seconds(samples);
  }
  // On each of `tensor_parallel` GPUs that split the layer and `context_parallel` GPUs that
  // split its sequence: 1/(T C) of its work (the undivided time 1/C), but the whole fixed time
  // per pass (every GPU launches every kernel).
  CostCurve curve(double device_flops, int tensor_parallel, int context_parallel = 1) const {
    if (tensor_parallel == 1 && context_parallel == 1) return curve(device_flops);
    const double split = static_cast<double>(tensor_parallel) * context_parallel;
    CostCurve c = CostCurve::linear(fixed_s + fixed_flops / device_flops / split,
                                    (seconds_per_sample + flops_per_sample / device_flops) / split +
                                        undivided_seconds_per_sample / context_parallel);
    if (!points.empty()) c.add(CostCurve::measured(points).scaled(1.0 / split));
    return c;
  }
};

// A mixture-of-experts layer's routed experts (zoo transformer), which expert parallelism
// spreads over GPUs (sim/model/expert_parallel.h). Their FLOPs, weights and stash are part of
// the layer's; this says how much of it is theirs.
struct MoeLayerCost {
  int32_t experts = 0;  // 0: not a mixture-of-experts layer
  int32_t top_k = 0;
  // One expert's forward FLOPs if every token of a sample went through it.
  double expert_flops_per_sample = 0;
  int64_t expert_parameter_bytes = 0;  // every routed expert's fp32 weights
  // One all-to-all's send buffer per sample: tokens x top_k x hidden, 16-bit.
  double dispatch_bytes_per_sample = 0;
  double router_imbalance = 1;  // the hottest expert's tokens over the mean
  // Or a measured histogram, shared by every layer of the model.
  std::shared_ptr<const std::vector<double>> tokens_per_expert;
  double capacity_factor = 0;  // 0: dropless
  int32_t shared_experts = 0;  // run on every token, split like the dense MLP
};

// One matrix product of a layer's forward, C[m x n] = A[m x k] B[k x n], and `count` of them
// side by side (a head each, an expert each), with m = rows_per_sample rows per sample. Tensor
// parallelism divides n (column-parallel), k (row-parallel) or count (heads, experts' width
// aside); an expert's rows grow with expert parallelism (each expert gathers its tokens from
// the group). What GEMM efficiency by shape times (sim/model/shape_efficiency.h).
struct LayerGemm {
  enum class Split { kNone, kN, kK, kCount };
  enum class Part { kWeights, kAttentionCore, kExpert };
  double rows_per_sample = 0;
  double n = 0, k = 0, count = 1;
  Split tensor_split = Split::kNone;
  Part part = Part::kWeights;
  // Fused attention (flash attention): the scores never leave the chip, so the product is
  // not bound by memory (the curve's roofline does not apply).
  bool on_chip = false;
  // Stays in BF16 under a low-precision training.precision, as the recipes keep it (the
  // router, the logits); the attention core always does.
  bool keeps_bf16 = false;
  double flops_per_sample() const { return 2 * rows_per_sample * n * k * count; }
  bool in_training_format() const { return part != Part::kAttentionCore && !keeps_bf16; }
};

struct ModelLayer {
  std::string name;
  LayerCost fwd;
  LayerCost bwd;
  double activation_bytes_per_sample = 0;  // this layer's output
  double stash_bytes_per_sample = 0;       // what the backward needs kept
  int64_t parameter_bytes = 0;             // fp32 weights
  double optim_seconds = 0;                // the optimizer step over them
  // Frozen (FreezePipe): forward only; no backward, gradient, optimizer state or stash.
  bool frozen = false;
  // Tensor parallelism (Megatron-LM): the all-reduces of one pass among the T GPUs of a
  // stage, each of `tp_allreduce_bytes_per_sample`; and the part of the stash each GPU keeps
  // whole (the rest is divided by T; everything is with sequence parallelism).
  int32_t tp_fwd_collectives = 0;
  int32_t tp_bwd_collectives = 0;
  double tp_allreduce_bytes_per_sample = 0;
  // Bytes one pass's collectives move beyond their count x tp_allreduce_bytes_per_sample: a
  // mixture-of-experts block whose experts split over the tensor-parallel GPUs gathers every
  // routed copy of the tokens, top_k of them (sim/model/expert_parallel.h).
  double tp_fwd_extra_bytes_per_sample = 0;
  double tp_bwd_extra_bytes_per_sample = 0;
  double tp_undivided_stash_bytes_per_sample = 0;
  // Of tp_bwd_collectives, those that reduce a column-parallel linear's input gradient: with
  // training.tensor_parallel_grad_overlap each runs under that linear's weight-gradient GEMM
  // (the kN-split entries of `gemms`). Recomputation's rerun forward adds none.
  int32_t tp_bwd_grad_collectives = 0;
  // Activation recomputation (training.recompute, sim/model/activation_recompute.h). A
  // transformer block can keep only its input (`checkpoint_bytes_per_sample` > 0) or drop its
  // attention core's activations for that core's FLOPs. Once applied, a backward first
  // rebuilds `transient_bytes_per_sample` (of which the undivided part stays whole on every
  // tensor-parallel GPU) and holds them while it runs.
  double checkpoint_bytes_per_sample = 0;
  double attention_stash_bytes_per_sample = 0;
  double attention_flops_per_sample = 0;
  // The attention core's memory-bound kernels in one forward (scale, mask, softmax and dropout
  // over the scores), bytes per sample; and their time at the device's memory-bound bandwidth
  // (set with the rest of the memory-bound time): what selective recomputation runs again.
  double attention_memory_bytes_per_sample = 0;
  double attention_memory_seconds_per_sample = 0;
  double transient_bytes_per_sample = 0;
  double transient_undivided_bytes_per_sample = 0;
  // Memory-bound kernels of one forward (zoo GPT blocks): bytes read and written per sample,
  // and the part every tensor-parallel GPU moves whole (sim/model/memory_bound_time.h).
  double fwd_memory_bytes_per_sample = 0;
  double tp_undivided_memory_bytes_per_sample = 0;
  // A low-precision format's casts of the GEMMs' operands (sim/model/format_casts.h), bytes
  // per sample in one forward (the inputs) and one backward (the output gradients), and the
  // part every tensor-parallel GPU casts whole unless sequence parallelism splits it.
  struct CastBytes {
    double bytes = 0, undivided = 0;
  };
  CastBytes fwd_cast, bwd_cast;
  // Zero-bubble schedules: the weight-gradient part (W) of `bwd`, in the same form (the
  // input-gradient part B is the rest), and the bytes per sample of the stash that W still
  // needs after B. Unset: half the backward, and the whole stash
  // (sim/model/backward_split.h).
  std::optional<LayerCost> bwd_weight;
  std::optional<double> bwd_weight_stash_bytes_per_sample;
  // Full recomputation: B reruns the forward and rebuilds the activations W needs, which it
  // holds from B to W; bwd_weight_stash_bytes_per_sample is then what B rebuilds for W, more
  // than the checkpoint the forward keeps.
  bool weight_stash_rebuilt = false;
  MoeLayerCost moe;
  // Expert parallelism: the all-to-alls of one forward and of one backward among the layer's
  // expert-parallel GPUs, each of moe.dispatch_bytes_per_sample (set by apply_expert_parallel).
  int32_t ep_fwd_all_to_alls = 0;
  int32_t ep_bwd_all_to_alls = 0;
  // Context parallelism (sim/schedule/context_parallel.h), per sample, 16-bit: the keys and
  // values of the whole sequence (what ring attention passes around and ALL_GATHER gathers),
  // the queries, keys, values and attention output (what Ulysses' all-to-alls move), and the
  // attention core's forward FLOPs (QK^T and the product with V), under which a ring hides.
  double cp_kv_bytes_per_sample = 0;
  double cp_qkvo_bytes_per_sample = 0;
  double cp_attention_flops_per_sample = 0;
  // The forward's matrix products (zoo transformers), whose FLOPs are part of fwd's.
  std::vector<LayerGemm> gemms;
  // Indices (into ModelSpec::layers) of the later layers that read this layer's output.
  // A chain has {i + 1}; a DAG (ResNet branches) may have several. The bytes crossing a
  // cut between layer k and k+1 are the outputs of layers <= k read by a layer > k.
  std::vector<int> consumers;
};

struct ModelSpec {
  std::vector<ModelLayer> layers;
  // Fraction of the device's peak FLOP/s that FLOP-counted layers reach (zoo models).
  double efficiency = 1.0;
  // The optimizer step's time per parameter a GPU updates, besides the layers' optim_seconds:
  // memory-bound, so set with model.zoo.memory_efficiency (sim/scenario/resolve_model.h).
  double optimizer_seconds_per_parameter = 0;
};

}  // namespace pipetwin
