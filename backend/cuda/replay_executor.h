// Carrying out a ReplayPlan (backend/common/replay_plan.h, replay_ops.h) on one GPU: one CUDA
// stream per lane, CUDA events for the dependencies between lanes, cuBLAS GEMMs or timed kernels
// for compute, NCCL for transfers and all-reduces, stream-ordered cudaMallocAsync for stashes.
// Plain C++ header: no CUDA types, callers build with g++.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/common/replay_ops.h"

namespace pipetwin {

// A new NCCL unique id, as bytes, for rank 0 to hand to every rank.
std::string new_nccl_unique_id();

struct ReplayResult {
  // Per op of the plan, in plan order: seconds since the run's start, on this GPU's
  // clock (CUDA events), and that start on the host's steady clock.
  std::vector<double> start_s, end_s;
  double host_start_s = 0;
  int64_t peak_allocated_bytes = 0;  // stashes and receive buffers the plan allocated
  int64_t peak_pool_bytes = 0;       // the stream-ordered pool's high-water mark
  int64_t device_used_bytes = 0;     // cudaMemGetInfo at the end: total - free
  double spin_scale = 1;             // timed kernels: requested / measured, from calibration
};

// Runs `plan` on `device` as rank `plan.rank` of `world_size` ranks sharing `nccl_id`.
// `host_now` reads the host's steady clock in seconds (the clock the ranks align).
// Throws std::runtime_error naming the CUDA/NCCL call that failed.
ReplayResult run_replay(const ReplayPlan& plan, int world_size, const std::string& nccl_id,
                        int device, double (*host_now)());

}  // namespace pipetwin
