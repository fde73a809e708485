// An UMPIPE plan: for every pipeline stage, how it cuts the minibatch into microbatches
// for the forward and, separately, for the backward (the two chromosomes of DGAP).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/spec/sample_range.h"

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

// What a backward of `samples` costs when the stage's forward cut (`forwards`: contiguous
// ranges in sample order) differs from its backward cut. Autograd cannot split a graph:
// each forward microbatch's graph is back-propagated whole, once per backward that covers
// part of it (as the real ranks do, backend/torch/rank_executor.cpp). So the cost is the sum
// of `bwd_of_size(size of f)` over the forward microbatches f the backward overlaps; with
// equal cuts, bwd_of_size(samples.size()) exactly. The lowering and the UMPIPE evaluator
// both use it, so that they stay bit-equal.
template <class BwdOfSize>
double backward_through_forwards(SampleRange samples, const std::vector<SampleRange>& forwards,
                                 BwdOfSize&& bwd_of_size) {
  auto it =
      std::upper_bound(forwards.begin(), forwards.end(), samples.lo,
                       [](int32_t lo, const SampleRange& forward) { return lo < forward.hi; });
  double total = 0;
  for (; it != forwards.end() && it->lo < samples.hi; ++it) total += bwd_of_size(it->size());
  return total;
}

// Every stage uses `microbatches` near-equal microbatches in both directions.
UnequalPlan equal_plan(int32_t stages, int32_t global_batch, int32_t microbatches);

// Empty when the plan is valid for `stages` stages and `global_batch` samples; otherwise
// what is wrong, naming the stage and direction ("stage 2 forward_sizes sum to 30, not 32").
std::string plan_problem(const UnequalPlan& plan, int32_t stages, int32_t global_batch);

// "[8,8,16] / [16,16]" per stage, for reports.
std::string plan_text(const StagePlan& stage);

}  // namespace pipetwin
