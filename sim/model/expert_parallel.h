// Expert parallelism (training.expert_parallel = E, as Megatron-Core does it): the routed
// experts of every mixture-of-experts layer are spread over E GPUs, experts / E each, taken
// from the tensor x context x data-parallel GPUs of a stage (MoE parallel folding; with
// training.expert_tensor_parallel equal to tensor_parallel, from the data-parallel replicas). Every
// GPU keeps its own batch; a layer's forward sends each token to the GPUs of its top-k experts and
// brings the results back (a dispatch and a combine all-to-all), and its backward does the same
// with the gradients.
//
// What this does to a layer's costs on one GPU:
//   * expert weights, gradients and optimizer state: divided by E x ETP;
//   * with ETP 1 < T, a block without shared experts keeps only its attention's
//     tensor-parallel collectives: each GPU dispatches its own tokens to whole experts;
//   * with ETP = T > 1, the experts' share of every GPU's tokens is gathered over the
//     tensor-parallel group (Megatron-Core's token dispatchers gather the routed tokens there,
//     and reduce-scatter their results): the MLP's tensor-parallel all-gather and
//     reduce-scatter move top_k copies of the tokens instead of one, and shared experts add
//     their own pair for the tokens themselves (not with the all-gather dispatcher, which
//     gathers the tokens once and routes them on each GPU);
//   * expert compute: the tokens its experts receive, top_k x its batch on average, times the
//     hottest GPU's load over the mean (router_imbalance or tokens_per_expert; capped by the
//     capacity factor), the slowest GPU setting the layer's time;
//   * GEMM efficiency: each local expert is its own GEMM, so the utilisation curve's fixed
//     part (model.zoo.utilization_half_batch) is paid per local expert, not once per layer;
//   * two all-to-alls per pass of tokens x top_k x hidden 16-bit values (E > 1 only);
//   * with the alltoall dispatcher, the sort of the received copies by local expert and back
//     (add_local_expert_sort).
// docs/parallelism.md, "Expert parallelism", states the model and its limits.
#pragma once

#include <cstdint>

#include "sim/spec/model_spec.h"

namespace pipetwin {

// The hottest of `expert_parallel` GPUs' routed tokens over the mean (>= 1), experts placed
// on GPUs in contiguous blocks of experts / expert_parallel.
double hottest_gpu_load(const MoeLayerCost& moe, int32_t expert_parallel);

// Rewrites every mixture-of-experts layer of `model` for `expert_parallel` GPUs per expert
// group (1 included: the per-expert GEMM efficiency and the load still apply), each expert
// split over `expert_tensor_parallel` GPUs where the dense layers split over
// `tensor_parallel` (1 or tensor_parallel: MoE parallel folding).
void apply_expert_parallel(ModelSpec& model, int32_t expert_parallel, int32_t tensor_parallel,
                           int32_t expert_tensor_parallel, double utilization_half_batch,
                           bool gathers_routed_copies = true);

// Megatron-Core's alltoall dispatcher on a GPU with several local experts: the copies it
// receives (and, with ETP = T > 1, gathers over the tensor-parallel group) arrive grouped by
// the GPU that sent them, and are sorted into one block per local expert for the grouped GEMM
// ("permutation 2", sort_chunks_by_idxs), then sorted back before the combine. Each sort
// reads and writes every copy: 4 x dispatch bytes (x ETP when gathered) per sample and pass
// (the backward sorts the gradients alike), at the hottest GPU's load, over `bytes_per_s`.
// Adds nothing with one local expert, whose copies arrive in order.
void add_local_expert_sort(ModelSpec& model, int32_t expert_parallel, int32_t tensor_parallel,
                           int32_t expert_tensor_parallel, double bytes_per_s);

}  // namespace pipetwin
