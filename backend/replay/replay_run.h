// `pipetwin run --backend cuda` on one rank: the scenario's Program replayed on
// this rank's GPU by backend/cuda, compute sized to the cost model, real NCCL transfers of
// the real bytes, timed with CUDA events and merged onto one clock. Needs neither LibTorch
// nor a store: NCCL's own bootstrap (NCCL_COMM_ID=MASTER_ADDR:MASTER_PORT) is the
// rendezvous, and NCCL all-reduces merge the times. Torch-free and CUDA-free header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/common/rank_environment.h"
#include "sim/exec/execution_times.h"
#include "sim/freeze/training_run.h"
#include "sim/program/program.h"
#include "sim/spec/resolved_scenario.h"
#include "traces/timeline.h"

namespace pipetwin {

struct RankGpuMemory {
  int64_t stash_peak_bytes = 0;   // the stash bytes the simulation says it holds at most
  int64_t peak_pool_bytes = 0;    // the pool's high-water mark, counted as the host allocated
  int64_t device_used_bytes = 0;  // cudaMemGetInfo after the run (all buffers, NCCL's too)
  int64_t device_total_bytes = 0;
};

struct ReplayRunResult {
  ExecutionTimes times;               // every instruction; time 0 is the common start
  std::vector<RankGpuMemory> memory;  // per rank
  std::string device_name;            // rank 0's GPU
  double host_enqueue_s = 0;          // rank 0: host seconds spent enqueuing its ops
  double spin_scale = 1;              // rank 0: timed kernels' calibration (requested/measured)
  int64_t allocation_stalls = 0;      // rank 0: stash allocations that waited for the GPU
  // Ranks that had to share a GPU with a lower rank (more ranks on a node than GPUs):
  // their NCCL traffic goes through its network transport and their kernels time-slice
  // with the other's, so the timings are not a cluster's. Empty on a proper cluster.
  std::vector<int> shared_gpu_ranks;
};

// Every rank returns the merged result. Throws RuntimeFailure naming the rank and the
// CUDA or NCCL call that failed.
ReplayRunResult replay_as_rank(const ResolvedScenario& setup, const Program& program,
                               const RankEnvironment& env);

// FreezePipe replayed (a scenario with a freeze block): the phases, plans and migrations
// that simulate_training plans, on the GPUs. The freeze events come from the scenario's
// fixed schedule, log or synthetic gradients (the replay has no model whose gradients
// could be measured). Each phase's Program runs for `iterations_per_phase` iterations (at
// most the phase's), each migration as the MIGRATE transfers of the bytes the model
// counts; a phase's measured mean iteration stands for all its iterations, as in
// simulate_training. All on one session: one NCCL world, split per Program.
struct ReplayTrainingRun {
  std::vector<TrainingPhase> phases;  // iteration_time_s: measured
  std::vector<Migration> migrations;  // seconds: measured
  double training_time_s = 0;         // phases' iterations plus migrations, as measured
  Timeline timeline;                  // the replayed Programs back to back, with instants
  std::vector<RankGpuMemory> memory;  // per rank, the most of any Program
  std::string device_name;
  std::vector<int> shared_gpu_ranks;
};
ReplayTrainingRun replay_freezing_as_rank(const ResolvedScenario& setup, const RankEnvironment& env,
                                          int32_t iterations_per_phase);

// "" when this machine can replay, else one line saying why (no GPU, or built without
// CUDA) and that the LibTorch CPU backend runs instead.
std::string cuda_replay_unavailable();

}  // namespace pipetwin
