// Carrying out a ReplayPlan (backend/replay/replay_plan.h, replay_ops.h) on one GPU: one CUDA
// stream per lane, CUDA events for the dependencies between lanes, cuBLAS GEMMs or timed kernels
// for compute, NCCL for transfers and all-reduces, stream-ordered cudaMallocAsync for stashes.
// Plain C++ header: no CUDA types, callers build with g++.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/replay/replay_ops.h"

namespace pipetwin {

// An NCCL unique id, as bytes. With NCCL_COMM_ID=host:port in the environment every rank
// gets the same one and rank 0 serves the bootstrap there (NCCL's own rendezvous);
// without it, a fresh random id for rank 0 to hand out.
std::string new_nccl_unique_id();

// The CUDA devices this process sees (0 when none, or no driver).
int cuda_device_count();

struct ReplayResult {
  // Per instruction of the whole Program (plan.program_size), every rank's, merged by one
  // NCCL all-reduce: seconds since the common start. Time 0 is, on every GPU, the end of
  // a world all-reduce that all ranks enter before their first op, so the clocks agree
  // to within one small all-reduce's completion skew.
  std::vector<double> start_s, end_s;
  // Per rank, also merged.
  std::vector<int64_t> stash_peak_bytes;    // plan.stash_reserve_bytes: the predicted peak
  std::vector<int64_t> peak_pool_bytes;     // the stream-ordered pool's high-water mark
  std::vector<int64_t> device_used_bytes;   // cudaMemGetInfo after the run: total - free
  std::vector<int64_t> device_total_bytes;  // cudaMemGetInfo: the GPU's memory
  std::vector<int64_t> shared_gpu;          // 1 where the rank said it shares its GPU
  std::string device_name;                  // this rank's GPU
  // Host seconds spent enqueuing every op: near the run's length, the host (not the GPU)
  // set the pace.
  double host_enqueue_s = 0;
  // Stash allocations that found the pool exhausted and waited for the device.
  int64_t allocation_stalls = 0;
  double spin_scale = 1;  // timed kernels: requested / measured, from this rank's calibration
};

// One rank's replays on its GPU: the world communicator (of `world_size` ranks sharing
// `nccl_id`), the lanes' streams and the cuBLAS handle are made once and serve every
// Program the rank runs (a FreezePipe run's phases and migrations). Every rank runs the
// same Programs in the same order. Throws std::runtime_error naming the CUDA, NCCL or
// cuBLAS call that failed.
class ReplaySession {
 public:
  ReplaySession(int world_size, int rank, const std::string& nccl_id, int device);
  ~ReplaySession();
  ReplaySession(const ReplaySession&) = delete;
  ReplaySession& operator=(const ReplaySession&) = delete;

  // Replays `plan` (this rank's); `shared_gpu`: this rank shares its GPU with another
  // (reported back per rank).
  ReplayResult run(const ReplayPlan& plan, bool shared_gpu);

  struct State;  // CUDA types, kept out of this header

 private:
  std::unique_ptr<State> state_;
};

}  // namespace pipetwin
