// Context parallelism (training.context_parallel: C) in the Program: the sequence of every
// sample is split over C GPUs, which Megatron-Core and Llama 3 place between tensor and
// pipeline parallelism (ranks ordered TP, CP, PP, DP). A Program lowered with one device per
// stage and replica, whose costs are already those of one GPU of C (make_layout divides the
// compute, stashes and activations sent, with causal load balance), becomes the Program of C
// GPUs per stage:
//   * device d becomes devices d * C + c, each running d's lanes unchanged; transfers pair
//     GPU c with GPU c of the peer stage;
//   * the gradient and weight collectives (data-parallel all-reduces, ZeRO's scatters and
//     gathers, gradient buckets) span the C GPUs of every member: gradients are reduced over
//     the data- and context-parallel GPUs together; expert all-to-alls stay among the GPUs
//     with the same c;
//   * every FWD and input-gradient backward of a stage with attention exchanges keys and
//     values among its C GPUs, by `context_parallel_algorithm`:
//       RING        an ALL_GATHER of the whole sequence's K and V per layer (C-1 ring steps of
//                   one chunk), the backward also a REDUCE_SCATTER of their gradients; both
//                   start under the pass, hidden by its attention (Instruction::lead_s:
//                   the attention's share of the pass);
//       ALL_GATHER  the same collectives, waited for (Llama 3);
//       ULYSSES     all-to-alls of queries, keys and values before attention and of its
//                   output after (DeepSpeed-Ulysses), waited for.
//     The pass's consumers and the next compute op of its lane wait for them.
// Runs after gradient buckets and before the tensor-parallel expansion.
#pragma once

#include <cstdint>

#include "scenario.pb.h"
#include "sim/program/program.h"
#include "sim/schedule/lowering.h"

namespace pipetwin {

Program expand_context_parallel(const Program& program, const PipelineLayout& layout,
                                int32_t context_parallel,
                                proto::Training::ContextParallelAlgorithm algorithm);

}  // namespace pipetwin
