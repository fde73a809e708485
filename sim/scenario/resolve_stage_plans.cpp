#include "sim/scenario/resolve_stage_plans.h"

namespace pipetwin {

UnequalPlan resolve_stage_plans(const ScenarioChecker& check, const proto::Schedule& p,
                                const TrainingSpec& training) {
  if (p.stage_plans_size() != p.stages()) {
    check.fail("schedule.stage_plans", "has " + std::to_string(p.stage_plans_size()) +
                                           " entries, expected one per stage (" +
                                           std::to_string(p.stages()) + ")");
  }
  const int32_t batch = training.global_batch / training.data_parallel;
  UnequalPlan plan;
  for (int s = 0; s < p.stage_plans_size(); ++s) {
    StagePlan stage;
    for (const bool forward : {true, false}) {
      const auto& sizes =
          forward ? p.stage_plans(s).forward_sizes() : p.stage_plans(s).backward_sizes();
      const std::string path = "schedule.stage_plans[" + std::to_string(s) + "]." +
                               (forward ? "forward_sizes" : "backward_sizes");
      if (sizes.empty()) check.fail(path, "missing (required by UMPIPE)");
      int64_t total = 0;
      for (int k = 0; k < sizes.size(); ++k) {
        check.positive(true, sizes[k], path + "[" + std::to_string(k) + "]");
        total += sizes[k];
      }
      if (total != batch) {
        check.fail(path, "sizes sum to " + std::to_string(total) + ", not the " +
                             (training.data_parallel > 1 ? "replica's " : "") + "batch of " +
                             std::to_string(batch));
      }
      (forward ? stage.forward_sizes : stage.backward_sizes).assign(sizes.begin(), sizes.end());
    }
    plan.stages.push_back(std::move(stage));
  }
  return plan;
}

}  // namespace pipetwin
