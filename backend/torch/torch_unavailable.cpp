// A build without LibTorch (the CUDA replay alone, say): every entry point of the LibTorch
// backend says so in one line and names what to install. Compiled only then.
#include "backend/torch/real_run.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

[[noreturn]] void no_torch() {
  throw RuntimeFailure(
      "this pipetwin was built without LibTorch, so it cannot run models on CPU ranks: install "
      "libtorch-dev (make deps) and rebuild; --backend cuda replays on GPUs without it");
}

}  // namespace

RealRunResult run_as_rank(const ResolvedScenario&, const Program&, const RankEnvironment&,
                          const RealRunOptions&) {
  no_torch();
}
RealRunResult run_reference(const ResolvedScenario&, const RealRunOptions&,
                            const std::vector<FreezeEvent>&) {
  no_torch();
}
RealRunResult run_stale_reference(const ResolvedScenario&, const RealRunOptions&,
                                  const StaleWeights&) {
  no_torch();
}
RealTrainingRun run_freezing_as_rank(const ResolvedScenario&, const RankEnvironment&,
                                     const RealRunOptions&) {
  no_torch();
}
Program with_measured_stash(const Program&, const RealRunResult&) { no_torch(); }
std::string real_run_unsupported(const ResolvedScenario&, const Program&) { no_torch(); }

}  // namespace pipetwin
