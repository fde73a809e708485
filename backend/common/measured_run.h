// What a real backend measured, whichever it is: one type for a run of one Program and for
// a FreezePipe training run, on LibTorch ranks or replayed on GPUs. A backend fills what
// it can measure; the parts only some runs have are optional. Torch-free and CUDA-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/exec/execution_times.h"
#include "sim/freeze/gradient_norms.h"
#include "sim/freeze/training_run.h"
#include "traces/timeline.h"

namespace pipetwin {

struct RankGpuMemory {
  int64_t stash_peak_bytes = 0;   // the stash bytes the simulation says it holds at most
  int64_t peak_pool_bytes = 0;    // the pool's high-water mark, counted as the host allocated
  int64_t device_used_bytes = 0;  // cudaMemGetInfo after the run (all buffers, NCCL's too)
  int64_t device_total_bytes = 0;
};

// The GPUs' own figures (the CUDA replay).
struct GpuFigures {
  std::string device_name;            // rank 0's GPU
  std::vector<RankGpuMemory> memory;  // per rank
  double host_enqueue_s = 0;          // rank 0: host seconds spent enqueuing its ops
  double spin_scale = 1;              // rank 0: timed kernels' calibration (requested/measured)
  int64_t allocation_stalls = 0;      // rank 0: stash allocations that waited for the GPU
  // Ranks that had to share a GPU with a lower rank (more ranks on a node than GPUs):
  // their NCCL traffic goes through its network transport and their kernels time-slice
  // with the other's, so the timings are not a cluster's. Empty on a proper cluster.
  std::vector<int> shared_gpu_ranks;
};

// A FreezePipe training run: the phases and migrations as measured, every Program of the
// run on one clock.
struct FreezingFigures {
  std::vector<TrainingPhase> phases;  // iteration_time_s: measured, mean of the phase
  std::vector<Migration> migrations;  // bytes: the payloads sent (or the model's); seconds
  // Per migration, what its MIGRATE instructions count (model ranks; empty on the replay,
  // whose migrations send exactly that).
  std::vector<int64_t> migration_model_bytes;
  double training_time_s = 0;  // wall time on rank 0, or the phases and migrations summed
  Timeline timeline;           // every Program back to back, with freeze instants
};

struct MeasuredRun {
  // A run of one Program: every instruction, time 0 being rank 0's start.
  ExecutionTimes times;
  double clock_offset_s = 0;  // this rank's measured offset to rank 0
  // A backend that trains a model: the mean loss of each iteration and, per layer, the
  // sum of its parameters after training; empty on the replay, which has no model.
  std::vector<double> losses;
  std::vector<double> weights;
  double train_s = 0;  // a reference run: seconds of the training loop alone
  // Per instruction (FWDs only, else 0): bytes of the activation tensors the FWD's layers
  // produced and autograd keeps for the backward, counted from the live tensors.
  std::vector<int64_t> stash_bytes;
  // With a gradient interval: [interval][layer] accumulated gradient L1 norm (replicas'
  // gradients are equal after their all-reduce; counted once).
  IntervalNorms gradient_norms;
  // Per instruction (MIGRATE and sends, else 0): bytes of the payload sent.
  std::vector<int64_t> payload_bytes;
  // Per instruction (FWD only, else -1): the weight version it ran with (its stage's
  // updates before it); asynchronous pipelines stash the older ones.
  std::vector<int32_t> forward_versions;
  std::optional<GpuFigures> gpu;            // the GPUs' figures, when the run had GPUs
  std::optional<FreezingFigures> freezing;  // a FreezePipe training run
};

}  // namespace pipetwin
