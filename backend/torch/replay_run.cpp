// `pipetwin run --backend cuda` on one rank: the Program replayed on this rank's GPU by
// backend/cuda, with what the LibTorch backend already has for the job around it: the
// c10d TCPStore rendezvous (which carries NCCL's unique id), the clock alignment, and a
// Gloo all-reduce that merges every rank's times onto rank 0's clock.
#include "backend/torch/real_run.h"
#include "sim/errors.h"

#ifdef PIPETWIN_HAS_CUDA
#include "backend/common/measured_times.h"
#include "backend/common/replay_plan.h"
#include "backend/cuda/cuda_calibration.h"
#include "backend/cuda/replay_executor.h"
#include "backend/torch/clock_alignment.h"
#include "backend/torch/rank_session.h"
#endif

namespace pipetwin {

std::string cuda_replay_unavailable() {
#ifdef PIPETWIN_HAS_CUDA
  const std::string why = cuda_unavailable();
  if (why.empty()) return "";
  return why + "; run on CPU ranks with --backend torch (the default)";
#else
  return "this pipetwin was built without CUDA (nvcc and NCCL not found); run on CPU ranks "
         "with --backend torch (the default)";
#endif
}

#ifdef PIPETWIN_HAS_CUDA

namespace {

ReplaySizing sizing_of(const ResolvedScenario& setup, int32_t rank) {
  ReplaySizing sizing;
  sizing.device_flops = setup.cluster.devices[rank].peak_flops * setup.model.efficiency;
  // FLOP-counted models (zoo) become GEMMs; measured times (profiles, explicit layers)
  // become timed kernels.
  sizing.flop_counted = setup.zoo.has_value();
  return sizing;
}

}  // namespace

RealRunResult replay_as_rank(const ResolvedScenario& setup, const Program& program,
                             const RankEnvironment& env, const RealRunOptions& options) {
  if (env.world_size != program.num_devices) {
    throw InputError("WORLD_SIZE=" + std::to_string(env.world_size) + " but the schedule needs " +
                     std::to_string(program.num_devices) + " ranks (one per GPU)");
  }
  RankSession session = open_session(env, options.timeout_s);
  // NCCL's unique id travels through the same TCPStore as the rest of the rendezvous.
  const std::string key = "pipetwin/nccl_unique_id";
  if (env.rank == 0) {
    const std::string id = new_nccl_unique_id();
    session.job.store->set(key, std::vector<uint8_t>(id.begin(), id.end()));
  }
  const std::vector<uint8_t> bytes = session.job.store->get(key);
  const ReplayPlan plan = make_replay_plan(program, env.rank, sizing_of(setup, env.rank));
  ReplayResult replay;
  try {
    replay = run_replay(plan, env.world_size, std::string(bytes.begin(), bytes.end()),
                        env.local_rank, steady_now_s);
  } catch (const std::exception& e) {
    throw RuntimeFailure("rank " + std::to_string(env.rank) + ": " + e.what());
  }
  // This rank's ops on rank 0's clock, merged by one all-reduce.
  const int64_t n = program.size();
  torch::Tensor all = torch::zeros({2 * n}, torch::kFloat64);
  auto data = all.accessor<double, 1>();
  const double base = replay.host_start_s - session.clock_base_s;
  for (size_t k = 0; k < plan.ops.size(); ++k) {
    data[plan.ops[k].instruction] = base + replay.start_s[k];
    data[n + plan.ops[k].instruction] = base + replay.end_s[k];
  }
  std::vector<torch::Tensor> buffer = {all};
  session.job.world->allreduce(buffer)->wait();
  RealRunResult result;
  result.clock_offset_s = session.clock_offset_s;
  const double* merged = buffer[0].data_ptr<double>();
  result.times.start_s.assign(merged, merged + n);
  result.times.end_s.assign(merged + n, merged + 2 * n);
  pair_transfer_times(program, result.times);
  return result;
}

#else

RealRunResult replay_as_rank(const ResolvedScenario&, const Program&, const RankEnvironment&,
                             const RealRunOptions&) {
  throw RuntimeFailure(cuda_replay_unavailable());
}

#endif

}  // namespace pipetwin
