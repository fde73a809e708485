// An UMPIPE plan: for every pipeline stage, how it cuts the minibatch into microbatches
// for the forward and, separately, for the backward (the two chromosomes of DGAP).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/program/instruction.h"

namespace pipetwin {

struct StagePlan {
  std::vector<int32_t> forward_sizes;
  std::vector<int32_t> backward_sizes;
  bool operator==(const StagePlan&) const = default;
};

struct UnequalPlan {
  std::vector<StagePlan> stages;
  bool operator==(const UnequalPlan&) const = default;
};

// Contiguous ranges [lo, hi) from sizes, in order.
std::vector<SampleRange> ranges_of(const std::vector<int32_t>& sizes);

// Every stage uses `microbatches` near-equal microbatches in both directions.
UnequalPlan equal_plan(int32_t stages, int32_t global_batch, int32_t microbatches);

// Empty when the plan is valid for `stages` stages and `global_batch` samples; otherwise
// what is wrong, naming the stage and direction ("stage 2 forward_sizes sum to 30, not 32").
std::string plan_problem(const UnequalPlan& plan, int32_t stages, int32_t global_batch);

// "[8,8,16] / [16,16]" per stage, for reports.
std::string plan_text(const StagePlan& stage);

}  // namespace pipetwin
