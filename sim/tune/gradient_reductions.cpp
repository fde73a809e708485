#include "sim/tune/gradient_reductions.h"

namespace pipetwin {

std::vector<Reduction> reductions_of(const ResolvedScenario& setup, const StageCost& cost,
                                     const GpuNumbering& gpus,
                                     const std::vector<int32_t>& devices) {
  const TrainingSpec& training = setup.training;
  const int32_t E = training.expert_parallel;
  const int64_t experts = E > 1 ? cost.expert_gradient_bytes : 0;
  // The dense gradients over every replica's C GPUs; the routed experts' over the GPUs
  // holding the same experts: every expert_group_replicas-th replica, at the same place in
  // its expert group.
  const auto group = [&](int32_t step, bool with_context) {
    std::vector<int32_t> g;
    for (int32_t d : devices) {
      const std::vector<int32_t> part =
          gpus.replica_group(d, 0, step, training.data_parallel, with_context);
      g.insert(g.end(), part.begin(), part.end());
    }
    return g;
  };
  std::vector<Reduction> out;
  const int32_t copies = static_cast<int32_t>(devices.size());
  const int32_t holders = training.data_parallel * training.context_parallel * copies;
  if (holders > 1 && cost.gradient_bytes - experts > 0) {
    out.push_back({group(1, true), cost.gradient_bytes - experts});
  }
  if (training.expert_data_parallel() * copies > 1 && experts > 0) {
    std::vector<int32_t> g;
    for (int32_t d : devices) {
      const std::vector<int32_t> part = gpus.expert_holders(
          d, training.expert_group_replicas(), training.data_parallel, training.expert_runs());
      g.insert(g.end(), part.begin(), part.end());
    }
    out.push_back({g, experts});
  }
  return out;
}

}  // namespace pipetwin
