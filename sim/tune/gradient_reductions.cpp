#include "sim/tune/gradient_reductions.h"

namespace pipetwin {

std::vector<Reduction> reductions_of(const ResolvedScenario& setup, const StageCost& cost,
                                     const GpuNumbering& gpus,
                                     const std::vector<int32_t>& devices) {
  const TrainingSpec& training = setup.training;
  const int32_t E = training.expert_parallel;
  const int64_t experts = E > 1 ? cost.expert_gradient_bytes : 0;
  const auto group = [&](int32_t step) {
    std::vector<int32_t> g;
    for (int32_t d : devices) {
      const std::vector<int32_t> part =
          gpus.replica_group(d, 0, step, training.data_parallel, true);
      g.insert(g.end(), part.begin(), part.end());
    }
    return g;
  };
  std::vector<Reduction> out;
  const int32_t holders =
      training.data_parallel * training.context_parallel * static_cast<int32_t>(devices.size());
  if (holders > 1 && cost.gradient_bytes - experts > 0) {
    out.push_back({group(1), cost.gradient_bytes - experts});
  }
  if (holders / E > 1 && experts > 0) out.push_back({group(E), experts});
  return out;
}

}  // namespace pipetwin
