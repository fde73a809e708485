// Expert parallelism in the Program: every FWD and input-gradient backward of a stage with
// mixture-of-experts layers gets an ALL_TO_ALL on its device's collective lane (its
// `collectives` all-to-alls of `bytes` each: a dispatch and a combine per layer), grouped with
// the same pass on the other GPUs of its expert-parallel group: replicas r with the same
// r / layout.expert_group_replicas, same stage and position. The pass's consumers and the next
// compute op of its lane wait for it: the all-to-alls sit on the critical path of every MoE
// block. DualPipe overlaps a forward of one direction with a backward of the other
// (DeepSeek-V3's F&B chunks): there the next compute op runs under the all-to-all and the one
// after it waits. Runs before the context- and tensor-parallel expansions
// (sim/schedule/context_parallel.h, tensor_parallel.h), which copy each all-to-all onto the
// GPUs of its stage and, the group being GroupKind::kExpertExchange, merge the copies that
// MoE parallel folding puts in one expert group: the context-parallel ones always, the
// tensor-parallel ones when each expert is whole on a GPU (expert_tensor_parallel 1).
#pragma once

#include <cstdint>

#include "sim/program/program.h"
#include "sim/schedule/lowering.h"

namespace pipetwin {

// Which compute op a pass's all-to-alls hold back: the next on its lane (kNone), the one
// after it (kNextOp: DualPipe), or the one after it where the next is of the other
// direction, a forward after a backward or the reverse (kOtherDirection: Megatron-Core's
// overlap_moe_expert_parallel_comm, which pairs them in the 1F1B steady state).
enum class ExpertOverlap { kNone, kNextOp, kOtherDirection };

// Whether the all-to-alls of a pass of `op` run under a next pass of `next` (nullptr: none).
bool expert_exchange_overlaps(ExpertOverlap overlap, Op op, const Op* next);

Program add_expert_all_to_alls(const Program& program, const PipelineLayout& layout,
                               ExpertOverlap overlap);

}  // namespace pipetwin
