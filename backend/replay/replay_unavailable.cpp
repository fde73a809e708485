// A build without nvcc or NCCL: `run --backend cuda` says so, in one line, and names the
// backend that does run.
#include "backend/replay/replay_run.h"
#include "sim/spec/errors.h"

namespace pipetwin {

std::string cuda_replay_unavailable() {
  return "this pipetwin was built without CUDA (nvcc and NCCL not found); run on CPU ranks "
         "with --backend torch (the default)";
}

ReplayRunResult replay_as_rank(const ResolvedScenario&, const Program&, const RankEnvironment&) {
  throw RuntimeFailure(cuda_replay_unavailable());
}

ReplayTrainingRun replay_freezing_as_rank(const ResolvedScenario&, const RankEnvironment&,
                                          int32_t) {
  throw RuntimeFailure(cuda_replay_unavailable());
}

}  // namespace pipetwin
