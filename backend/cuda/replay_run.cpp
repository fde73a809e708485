// `pipetwin run --backend cuda` on one rank (see backend/common/replay_run.h). No LibTorch:
// NCCL's bootstrap is the rendezvous and NCCL all-reduces merge the times, so a machine
// with the CUDA toolkit and NCCL needs nothing else.
#include "backend/common/replay_run.h"

#include <cstdlib>
#include <iostream>

#include "backend/common/measured_times.h"
#include "backend/common/replay_plan.h"
#include "backend/common/stash_ledger.h"
#include "backend/cuda/cuda_calibration.h"
#include "backend/cuda/replay_executor.h"
#include "sim/errors.h"
#include "sim/exec/analytic_executor.h"

namespace pipetwin {
namespace {

ReplaySizing sizing_of(const ResolvedScenario& setup, int32_t rank) {
  ReplaySizing sizing;
  sizing.device_flops = setup.cluster.devices[rank].peak_flops * setup.model.efficiency;
  // FLOP-counted models (zoo) become GEMMs; measured times (profiles, explicit layers)
  // become timed kernels.
  sizing.flop_counted = setup.zoo.has_value();
  return sizing;
}

// NCCL's own rendezvous: every rank derives the same unique id from NCCL_COMM_ID and rank
// 0 serves the bootstrap there. One port above MASTER_PORT, which torchrun's agent store
// holds. A value the user set is kept.
void set_nccl_rendezvous(const RankEnvironment& env) {
  const std::string address = env.master_addr + ":" + std::to_string(env.master_port + 1);
  ::setenv("NCCL_COMM_ID", address.c_str(), 0);
  // A job whose master is this machine's loopback is one machine: its sockets (the
  // bootstrap's, and the network transport's when ranks share a GPU) stay on loopback.
  if (env.master_addr.rfind("127.", 0) == 0 || env.master_addr == "localhost") {
    ::setenv("NCCL_SOCKET_IFNAME", "lo", 0);
  }
}

// More ranks on a node than GPUs: NCCL refuses two ranks of one communicator on one GPU
// unless they look like different hosts, so a rank that shares gets its own host id (its
// traffic then takes NCCL's network transport). For trying schedules on one GPU, not for
// timings: kernels of the ranks time-slice.
bool share_gpu_if_needed(const RankEnvironment& env, int devices) {
  if (env.local_rank < devices) return false;
  const std::string id = "pipetwin-shared-gpu-rank-" + std::to_string(env.rank);
  ::setenv("NCCL_HOSTID", id.c_str(), 1);
  return true;
}

// The stash this rank holds at most when its ops run at the analytic executor's times.
int64_t predicted_stash_peak(const ReplayPlan& plan, const Program& program,
                             const ResolvedScenario& setup) {
  const ExecutionTimes times = run_analytic(program, setup.cluster);
  std::vector<double> start, end;
  for (const ReplayOp& op : plan.ops) {
    start.push_back(times.start_s[op.instruction]);
    end.push_back(times.end_s[op.instruction]);
  }
  return stash_peak(stash_ledger(plan), start, end);
}

}  // namespace

std::string cuda_replay_unavailable() {
  const std::string why = cuda_unavailable();
  if (why.empty()) return "";
  return why + "; run on CPU ranks with --backend torch (the default)";
}

ReplayRunResult replay_as_rank(const ResolvedScenario& setup, const Program& program,
                               const RankEnvironment& env) {
  if (env.world_size != program.num_devices) {
    throw InputError("WORLD_SIZE=" + std::to_string(env.world_size) + " but the schedule needs " +
                     std::to_string(program.num_devices) + " ranks (one per GPU)");
  }
  const int devices = cuda_device_count();
  if (devices < 1)
    throw RuntimeFailure("rank " + std::to_string(env.rank) + ": " + cuda_unavailable());
  const bool shared = share_gpu_if_needed(env, devices);
  set_nccl_rendezvous(env);
  ReplayPlan plan = make_replay_plan(program, env.rank, sizing_of(setup, env.rank));
  plan.stash_reserve_bytes = predicted_stash_peak(plan, program, setup);
  ReplayResult replay;
  try {
    replay =
        run_replay(plan, env.world_size, new_nccl_unique_id(), env.local_rank % devices, shared);
  } catch (const std::exception& e) {
    throw RuntimeFailure("rank " + std::to_string(env.rank) + ": " + e.what());
  }
  ReplayRunResult result;
  result.times.start_s = std::move(replay.start_s);
  result.times.end_s = std::move(replay.end_s);
  pair_transfer_times(program, result.times);
  for (int r = 0; r < env.world_size; ++r) {
    result.memory.push_back({replay.stash_peak_bytes[r], replay.peak_pool_bytes[r],
                             replay.device_used_bytes[r], replay.device_total_bytes[r]});
  }
  result.device_name = replay.device_name;
  result.host_enqueue_s = replay.host_enqueue_s;
  result.spin_scale = replay.spin_scale;
  for (int r = 0; r < env.world_size; ++r) {
    if (replay.shared_gpu[r]) result.shared_gpu_ranks.push_back(r);
  }
  return result;
}

}  // namespace pipetwin
