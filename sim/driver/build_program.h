// The Scheduler's entry point for static schedules: a ResolvedScenario in, a validated Program out.
#pragma once

#include <utility>
#include <vector>

#include "sim/program/program.h"
#include "sim/schedule/expert_all_to_all.h"
#include "sim/schedule/lowering.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// Layers per model chunk: the explicit schedule.partition, or contiguous ranges
// balanced by fwd+bwd time on the stage's device, each chunk at the speed of the slowest GPU
// that runs it (chunk_speeds) when the cluster's devices compute unevenly.
std::vector<int32_t> place_layers(const ResolvedScenario& setup);

// Whether the model's pass costs are FLOP counts (the zoo, Hugging Face configs), which run
// faster on a GPU of a higher peak; measured times (explicit layers, profiles) do not change
// with peak_tflops.
bool flop_counted(const ModelSpec& model);

// How fast `device` computes: its peak (FLOP-counted models; 1 otherwise) times its
// compute_scale (cluster.overrides).
double device_speed(const ResolvedScenario& setup, int32_t device);

// Per model chunk, the device_speed of the slowest GPU that runs it (over its replicas and its
// tensor and context copies), relative to device 0's peak (FLOP-counted models) or to 1.
std::vector<double> chunk_speeds(const ResolvedScenario& setup);

// place_layers as [first, last) layer ranges, one per model chunk.
std::vector<std::pair<int32_t, int32_t>> chunk_layer_ranges(const ResolvedScenario& setup);

// The FLOP/s FLOP-counted layers reach on `device` (its peak times the model's efficiency).
double device_flops(const ResolvedScenario& setup, int device);

// Chunk c of the model runs on device c % stages (Megatron's interleaving; with one
// virtual stage, stage s on device s), in the first replica; under ZB_V on device c for
// the first `stages` chunks and 2 x stages - 1 - c for the others (the V).
int32_t chunk_device(const ResolvedScenario& setup, int32_t chunk);

// Which compute op an MoE pass's expert all-to-alls hold back (DualPipe's F&B chunks,
// training.overlap_moe_expert_parallel_comm).
ExpertOverlap expert_overlap(const ResolvedScenario& setup);

// Forward + backward seconds of each layer for one microbatch of the scenario's size (a
// frozen layer: forward only), on device 0: what placement balances.
std::vector<double> layer_times(const ResolvedScenario& setup);

// Splits `global_batch` samples into `microbatches` contiguous ranges whose sizes
// differ by at most one (the first ones take the remainder).
std::vector<SampleRange> equal_ranges(int32_t global_batch, int32_t microbatches);

// Per-stage costs and placement for the given layer counts.
PipelineLayout make_layout(const ResolvedScenario& setup,
                           const std::vector<int32_t>& layers_per_chunk);

// Builds the Program for the scenario's schedule kind and validates it.
Program build_program(const ResolvedScenario& setup);

}  // namespace pipetwin
