#include "sim/spec/unequal_plan.h"

namespace pipetwin {

std::vector<SampleRange> ranges_of(const std::vector<int32_t>& sizes) {
  std::vector<SampleRange> ranges;
  int32_t lo = 0;
  for (int32_t size : sizes) {
    ranges.push_back({lo, lo + size});
    lo += size;
  }
  return ranges;
}

UnequalPlan equal_plan(int32_t stages, int32_t global_batch, int32_t microbatches) {
  std::vector<int32_t> sizes;
  for (int32_t m = 0; m < microbatches; ++m) {
    sizes.push_back(global_batch / microbatches + (m < global_batch % microbatches ? 1 : 0));
  }
  return {std::vector<StagePlan>(stages, StagePlan{sizes, sizes})};
}

std::string plan_problem(const UnequalPlan& plan, int32_t stages, int32_t global_batch) {
  if (static_cast<int32_t>(plan.stages.size()) != stages) {
    return "has " + std::to_string(plan.stages.size()) + " stage plans for " +
           std::to_string(stages) + " stages";
  }
  for (int32_t s = 0; s < stages; ++s) {
    for (const bool forward : {true, false}) {
      const auto& sizes = forward ? plan.stages[s].forward_sizes : plan.stages[s].backward_sizes;
      const std::string where =
          "stage " + std::to_string(s) + (forward ? " forward_sizes" : " backward_sizes");
      if (sizes.empty()) return where + " is empty";
      int64_t total = 0;
      for (int32_t size : sizes) {
        if (size <= 0)
          return where + " has a size of " + std::to_string(size) + " (must be positive)";
        total += size;
      }
      if (total != global_batch) {
        return where + " sum to " + std::to_string(total) + ", not the batch of " +
               std::to_string(global_batch);
      }
    }
  }
  return "";
}

std::string plan_text(const StagePlan& stage) {
  auto list = [](const std::vector<int32_t>& sizes) {
    std::string text = "[";
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (i > 0) text += ',';
      text += std::to_string(sizes[i]);
    }
    return text + "]";
  };
  return list(stage.forward_sizes) + " / " + list(stage.backward_sizes);
}

}  // namespace pipetwin
