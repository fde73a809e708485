// Tensor parallelism (Megatron-LM): a Program lowered with one device per stage and replica,
// whose costs are already those of one GPU of T (make_layout divides compute, weights,
// stashes and transfers), becomes the Program of T GPUs per stage:
//   * device d becomes devices d * T + t, t = 0 .. T-1 (tp innermost), each running d's
//     lanes unchanged;
//   * transfers pair GPU t with GPU t of the peer stage; a data-parallel ALLREDUCE becomes
//     T all-reduces, GPU t's among the replicas' GPUs t;
//   * every FWD and BWD with tensor-parallel collectives gets an ALLREDUCE among its T GPUs
//     (`collectives` all-reduces of its bytes), which waits for it and which the next
//     compute op of the lane and everything that consumed the pass wait for: Megatron's
//     all-reduces sit on the critical path of every block;
//   * with training.tensor_parallel_grad_overlap, a BWD's collectives are split: first
//     those of its column-parallel linears' input gradients (tp_bwd_hidden_*), an ALLREDUCE
//     or, with sequence parallelism, a REDUCE_SCATTER, which may start under the BWD's last
//     tp_bwd_hidden_share of compute, its weight-gradient GEMMs (a lead, Instruction::lead_s);
//     then, after the BWD, sequence parallelism's ALL_GATHER of the same bytes and an
//     ALLREDUCE of the rest (a full recomputation's rerun forward). The pass's consumers wait
//     for the last of them and for the pass: max(0, c_hidden - share * BWD) + c_rest. A
//     split backward (BWD_INPUT) has no weight gradients to hide under: its collectives
//     follow it whole.
// The collective lane holds these in the order of the compute ops that trigger them.
#pragma once

#include <cstdint>

#include "sim/program/program.h"
#include "sim/schedule/lowering.h"

namespace pipetwin {

Program expand_tensor_parallel(const Program& program, const PipelineLayout& layout,
                               int32_t tensor_parallel);

}  // namespace pipetwin
