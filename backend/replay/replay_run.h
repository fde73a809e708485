// The CUDA replay on one rank (what CudaBackend, backend/cuda/cuda_backend.h, calls): the
// scenario's Program replayed on this rank's GPU by backend/cuda, compute sized to the cost model,
// real NCCL transfers of the real bytes, timed with CUDA events and merged onto one clock. Needs
// neither LibTorch nor a store: NCCL's own bootstrap (NCCL_COMM_ID=MASTER_ADDR:MASTER_PORT) is the
// rendezvous, and NCCL all-reduces merge the times. Torch-free and CUDA-free header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/common/measured_run.h"
#include "backend/common/rank_environment.h"
#include "sim/program/program.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// Every rank returns the merged result. Throws RuntimeFailure naming the rank and the
// CUDA or NCCL call that failed.
MeasuredRun replay_as_rank(const ResolvedScenario& setup, const Program& program,
                           const RankEnvironment& env);

// FreezePipe replayed (a scenario with a freeze block): the phases, plans and migrations
// that simulate_training plans, on the GPUs. The freeze events come from the scenario's
// fixed schedule, log or synthetic gradients (the replay has no model whose gradients
// could be measured). Each phase's Program runs for `iterations_per_phase` iterations (at
// most the phase's), each migration as the MIGRATE transfers of the bytes the model
// counts; a phase's measured mean iteration stands for all its iterations, as in
// simulate_training. All on one session: one NCCL world, split per Program.
// MeasuredRun::freezing: the phases (iteration_time_s measured), the migrations (seconds
// measured), the phases' iterations plus migrations as training_time_s and the replayed
// Programs back to back; MeasuredRun::gpu: per rank, the most memory of any Program.
MeasuredRun replay_freezing_as_rank(const ResolvedScenario& setup, const RankEnvironment& env,
                                    int32_t iterations_per_phase);

}  // namespace pipetwin
