// Gradient reductions after the pipeline flush (training.grad_reduce_after_flush):
// Megatron-LM's own data parallelism (--DDP-impl local) all-reduces the gradients of every
// model chunk once its schedule has returned, and DeepSpeed's pipeline engine reduces them
// as the schedule's last instruction. Lowering lets each chunk's reduction wait for that
// chunk's last backward only; where a device holds several chunks (interleaved 1F1B, ZB-V,
// DualPipe), the first chunk's then starts under the other chunks' backwards.
#pragma once

#include "sim/program/program.h"

namespace pipetwin {

// Makes every data-parallel gradient reduction (an ALLREDUCE or REDUCE_SCATTER on the
// data-parallel lane) also wait for the last pass on its device's compute lane that
// computes weight gradients (BWD or BWD_WEIGHT) in its iteration: the device's flush.
// Existing dependencies keep their order; the new one comes last in its row.
void reduce_after_flush(Program& program);

}  // namespace pipetwin
