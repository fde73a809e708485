// One pipeline replica's passes for the fast evaluator: each chunk's compute for one
// microbatch, the collectives that follow each pass on its device's collective lane (tensor
// parallelism's all-reduces, expert all-to-alls, what context parallelism's key/value exchange
// adds beyond the attention hiding it, ZeRO-3's gathers) priced by the network model on the GPUs
// that hold them, its stashes and receive buffers as lowering rounds them, and each cut's
// transfer.
#pragma once

#include <vector>

#include "sim/network/collective_algorithm.h"
#include "sim/schedule/lowering.h"
#include "sim/spec/resolved_scenario.h"
#include "sim/tune/gpu_numbering.h"
#include "sim/tune/pipeline_timing.h"

namespace pipetwin {

PipelinePasses replica_passes(const ResolvedScenario& setup, const PipelineLayout& layout,
                              const GpuNumbering& gpus);

// The tensor- and expert-parallel collectives of one pass of `samples` on layout device
// `device`, priced alone and whole (a backward's too, none under its weight gradients): what
// a pass holds on real ranks, which run them inside it (sim/fit/trace_fit.h).
double in_pass_collective_seconds(const ResolvedScenario& setup, const StageCost& cost,
                                  const GpuNumbering& gpus, int32_t device, double samples,
                                  bool forward);

// `count` collectives of `bytes` in all over `group` by the network model; 0 for a group of
// one or nothing to move.
double collective_time(const ResolvedScenario& setup, Collective kind,
                       const std::vector<int32_t>& group, double bytes, int32_t count);

}  // namespace pipetwin
