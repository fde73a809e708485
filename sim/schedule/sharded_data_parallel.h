// Sharded data parallelism (ZeRO, training.zero_stage) in the Program. Lowering gives each
// stage's update an ALLREDUCE of its gradients over the replicas that hold the same weights
// (sim/schedule/lowering_updates.h); this pass turns each into what ZeRO runs over the same
// group, on the collective lane:
//   stage 1: a REDUCE_SCATTER of the gradients after the last backward (each replica updates
//            its shard; the OPTIM is 1/N as long) and an ALL_GATHER of the updated weights,
//            which the stage's next pass waits for;
//   stage 2: the gradients are not kept whole, so each backward's are reduce-scattered as it
//            ends (DeepSpeed reduces every micro-step), then the same OPTIM and ALL_GATHER;
//   stage 3: as stage 2 without the ALL_GATHER after the step; instead each FWD and each
//            backward that needs the weights (BWD, BWD_INPUT) gathers its layers one by one,
//            prefetching the next while one computes (PyTorch FSDP): an ALL_GATHER of the
//            pass's first layer that the pass waits for, issued when the op before it on the
//            compute lane ends, and one of the other layers that runs under the pass and that
//            the pass's consumers wait for. Against layer-by-layer prefetch this is exact when
//            a layer computes longer than the next one gathers, and at most one layer's
//            compute early per pass otherwise.
// How long stage 3's gathered weights stay whole (training.fsdp_reshard):
//   after each pass: as above (FSDP2's reshard_after_forward, DeepSpeed);
//   after backward:  a backward gathers nothing, computing with what its forward gathered; a
//                    forward gathers unless the stage's previous pass was a forward too;
//   after step:      only the stage's first pass of the iteration gathers, and the gradients
//                    are reduce-scattered once, after its last backward (as stage 1 does),
//                    with no gather after the update (the next iteration's first pass does it).
// Each new collective groups the same step of every member of the all-reduce it replaces,
// in the same ring order. Hybrid sharding (training.fsdp_shard_size S) cuts each group of N
// members into N / S consecutive shard groups, and follows every reduce-scatter with an
// all-reduce of its 1/S shard among the members with the same place in their shard groups.
// Runs after the expert all-to-alls and before the tensor-parallel expansion, which copies
// every collective onto the T GPUs of its stage.
#pragma once

#include <cstdint>

#include "sim/program/program.h"
#include "sim/schedule/lowering.h"

namespace pipetwin {

struct Sharding {
  int32_t zero_stage = 0;
  enum class Reshard {
    kAfterEachPass,
    kAfterBackward,
    kAfterStep
  } reshard = Reshard::kAfterEachPass;
  int32_t shard_size = 0;  // members per shard group; 0: the whole group
};

// The members of one shard group out of a group of `members` (the whole group where S does
// not cut it evenly).
int32_t shard_group_size(int32_t members, int32_t shard_size);

Program shard_data_parallel(const Program& program, const PipelineLayout& layout,
                            const Sharding& sharding);

}  // namespace pipetwin
