// The CUDA replay on one rank (see backend/replay/replay_run.h). No LibTorch:
// NCCL's bootstrap is the rendezvous and NCCL all-reduces merge the times, so a machine
// with the CUDA toolkit and NCCL needs nothing else.
#include "backend/replay/replay_run.h"

#include <algorithm>
#include <cstdlib>

#include "backend/common/measured_times.h"
#include "backend/cuda/cuda_calibration.h"
#include "backend/cuda/replay_executor.h"
#include "backend/replay/replay_plan.h"
#include "backend/replay/stash_ledger.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/make_timeline.h"
#include "sim/exec/memory_curve.h"
#include "sim/spec/errors.h"

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

// The most stash bytes the plan holds at once at the analytic executor's times: what the
// memory pool is grown to beforehand.
int64_t simulated_stash_peak(const ReplayPlan& plan, const Program& program,
                             const ResolvedScenario& setup) {
  const ExecutionTimes times = run_analytic(program, setup.cluster);
  std::vector<double> start, end;
  for (const ReplayOp& op : plan.ops) {
    start.push_back(times.start_s[op.instruction]);
    end.push_back(times.end_s[op.instruction]);
  }
  return stash_peak(stash_ledger(plan), start, end);
}

// NCCL's own rendezvous: every rank derives the same unique id from NCCL_COMM_ID and rank
// 0 serves the bootstrap there, on PIPETWIN_NCCL_PORT (the local launcher's) or one port
// above MASTER_PORT (which torchrun's agent store holds). A value the user set is kept.
void set_nccl_rendezvous(const RankEnvironment& env) {
  int port = env.master_port + 1;
  if (const char* chosen = std::getenv("PIPETWIN_NCCL_PORT"); chosen != nullptr && *chosen) {
    port = std::atoi(chosen);
    if (port <= 0 || port > 65535) throw InputError("PIPETWIN_NCCL_PORT is not a TCP port");
  }
  const std::string address = env.master_addr + ":" + std::to_string(port);
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

std::string rank_failure(const RankEnvironment& env, const std::exception& e) {
  return "rank " + std::to_string(env.rank) + ": " + e.what();
}

// This rank's GPU and the job's NCCL world, for every Program the rank replays.
class RankReplay {
 public:
  RankReplay(const RankEnvironment& env, int32_t needed_ranks) : env_(env) {
    if (env.world_size != needed_ranks) {
      throw InputError("WORLD_SIZE=" + std::to_string(env.world_size) + " but the schedule needs " +
                       std::to_string(needed_ranks) + " ranks (one per GPU)");
    }
    const int devices = cuda_device_count();
    if (devices < 1)
      throw RuntimeFailure("rank " + std::to_string(env.rank) + ": " + cuda_unavailable());
    shared_ = share_gpu_if_needed(env, devices);
    set_nccl_rendezvous(env);
    try {
      session_ = std::make_unique<ReplaySession>(env.world_size, env.rank, new_nccl_unique_id(),
                                                 env.local_rank % devices);
    } catch (const std::exception& e) {
      throw RuntimeFailure(rank_failure(env, e));
    }
  }

  // Every rank's times of `program` (time 0: its common start) and GPU figures.
  MeasuredRun run(const ResolvedScenario& setup, const Program& program) {
    ReplayPlan plan = make_replay_plan(program, env_.rank, sizing_of(setup, env_.rank));
    plan.stash_reserve_bytes = simulated_stash_peak(plan, program, setup);
    ReplayResult replay;
    try {
      replay = session_->run(plan, shared_);
    } catch (const std::exception& e) {
      throw RuntimeFailure(rank_failure(env_, e));
    }
    MeasuredRun result;
    result.times.start_s = std::move(replay.start_s);
    result.times.end_s = std::move(replay.end_s);
    pair_transfer_times(program, result.times);
    GpuFigures& gpu = result.gpu.emplace();
    for (int r = 0; r < env_.world_size; ++r) {
      gpu.memory.push_back({replay.stash_peak_bytes[r], replay.peak_pool_bytes[r],
                            replay.device_used_bytes[r], replay.device_total_bytes[r]});
      if (replay.shared_gpu[r]) gpu.shared_gpu_ranks.push_back(r);
    }
    gpu.device_name = replay.device_name;
    gpu.host_enqueue_s = replay.host_enqueue_s;
    gpu.spin_scale = replay.spin_scale;
    gpu.allocation_stalls = replay.allocation_stalls;
    return result;
  }

 private:
  RankEnvironment env_;
  bool shared_ = false;
  std::unique_ptr<ReplaySession> session_;
};

void keep_largest(std::vector<RankGpuMemory>& into, const std::vector<RankGpuMemory>& run) {
  if (into.empty()) into.resize(run.size());
  for (size_t r = 0; r < run.size(); ++r) {
    into[r].stash_peak_bytes = std::max(into[r].stash_peak_bytes, run[r].stash_peak_bytes);
    into[r].peak_pool_bytes = std::max(into[r].peak_pool_bytes, run[r].peak_pool_bytes);
    into[r].device_used_bytes = std::max(into[r].device_used_bytes, run[r].device_used_bytes);
    into[r].device_total_bytes = run[r].device_total_bytes;
  }
}

}  // namespace

MeasuredRun replay_as_rank(const ResolvedScenario& setup, const Program& program,
                           const RankEnvironment& env) {
  RankReplay rank(env, program.num_devices);
  return rank.run(setup, program);
}

MeasuredRun replay_freezing_as_rank(const ResolvedScenario& setup, const RankEnvironment& env,
                                    int32_t iterations_per_phase) {
  // Every rank plans alike: the analytic engine is deterministic.
  const TrainingRun planned = simulate_training(setup, SimulationOptions{});
  const PhasePlan& first = planned.phases.front().plan;
  RankReplay rank(env, first.stages * first.data_parallel);
  MeasuredRun run;
  FreezingFigures& freezing = run.freezing.emplace();
  GpuFigures& gpu = run.gpu.emplace();
  double clock = 0;  // the Programs back to back on one timeline
  uint64_t parts = 0;
  auto record = [&](const MeasuredRun& result, const Program& program, const ResolvedScenario& part,
                    int32_t iteration) {
    append_timeline(freezing.timeline,
                    make_timeline(program, part.cluster, result.times,
                                  memory_curve(program, result.times), "cuda"),
                    clock, iteration, parts++);
    // Each Program's times start at its own time 0: the next one goes after this one's end.
    clock += *std::max_element(result.times.end_s.begin(), result.times.end_s.end());
    keep_largest(gpu.memory, result.gpu->memory);
    gpu.device_name = result.gpu->device_name;
    gpu.shared_gpu_ranks = result.gpu->shared_gpu_ranks;
  };
  for (size_t k = 0; k < planned.phases.size(); ++k) {
    if (k > 0) {
      // The repartition before phase k: its MIGRATE transfers, then the instants.
      const PhasePlan& from = planned.phases[k - 1].plan;
      const PhasePlan& to = planned.phases[k].plan;
      Migration moved = planned.migrations[k - 1];
      const Program migration = migration_program(setup, from, to);
      moved.seconds = 0;
      if (migration.size() > 0) {
        const MeasuredRun result = rank.run(setup, migration);
        moved.seconds = result.times.span_s();
        record(result, migration, setup, moved.iteration);
      }
      freezing.migrations.push_back(moved);
      freezing.timeline.instants.push_back(
          {0, "freeze " + std::to_string(to.frozen_layers) + " layers", clock});
      freezing.timeline.instants.push_back({0,
                                            "repartition " + std::to_string(to.stages) +
                                                " stages x " + std::to_string(to.data_parallel) +
                                                " replicas",
                                            clock});
    }
    TrainingPhase phase = planned.phases[k];
    ResolvedScenario part = phase_setup(setup, phase.plan);
    const int32_t replayed = std::max(1, std::min(iterations_per_phase, phase.iterations));
    part.training.iterations = replayed;
    const Program program = build_program(part);
    const MeasuredRun result = rank.run(part, program);
    phase.iteration_time_s = result.times.span_s() / replayed;
    record(result, program, part, phase.first_iteration);
    freezing.training_time_s += phase.iteration_time_s * phase.iterations;
    freezing.phases.push_back(phase);
  }
  for (const Migration& m : freezing.migrations) freezing.training_time_s += m.seconds;
  return run;
}

}  // namespace pipetwin
