#include "sim/umpipe/baselines.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"

namespace pipetwin {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int32_t effective_cap(int32_t global_batch, int32_t max_microbatches) {
  return max_microbatches <= 0 ? global_batch : std::min(max_microbatches, global_batch);
}

int64_t saturating_add(int64_t a, int64_t b) { return a > kMax - b ? kMax : a + b; }
int64_t saturating_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kMax / b ? kMax : a * b;
}

// Compositions of n into at most `cap` positive parts: sum over m of C(n - 1, m - 1).
int64_t composition_count(int32_t n, int32_t cap) {
  int64_t total = 0, binomial = 1;  // C(n - 1, k) for k = 0, 1, ...
  for (int32_t k = 0; k < cap && k <= n - 1; ++k) {
    total = saturating_add(total, binomial);
    if (binomial == kMax) return kMax;
    // C(n-1, k+1) = C(n-1, k) * (n-1-k) / (k+1), exact in 128 bits.
    const __int128 next = static_cast<__int128>(binomial) * (n - 1 - k) / (k + 1);
    binomial = next > kMax ? kMax : static_cast<int64_t>(next);
  }
  return total;
}

// Every composition of n into at most `cap` parts, by cut mask (n <= 31).
std::vector<std::vector<int32_t>> compositions(int32_t n, int32_t cap) {
  std::vector<std::vector<int32_t>> all;
  const uint32_t masks = 1u << (n - 1);
  for (uint32_t mask = 0; mask < masks; ++mask) {
    if (std::popcount(mask) + 1 > cap) continue;
    std::vector<int32_t> sizes;
    int32_t last = 0;
    for (int32_t position = 1; position < n; ++position) {
      if (mask & (1u << (position - 1))) {
        sizes.push_back(position - last);
        last = position;
      }
    }
    sizes.push_back(n - last);
    all.push_back(std::move(sizes));
  }
  return all;
}

}  // namespace

std::vector<int32_t> chunk_sizes(int32_t global_batch, int32_t b) {
  std::vector<int32_t> sizes(static_cast<size_t>(global_batch / b), b);
  if (global_batch % b != 0) sizes.push_back(global_batch % b);
  return sizes;
}

UnequalPlan local_greedy_plan(int32_t stages, int32_t global_batch, int32_t max_microbatches,
                              const StageSecondsPerSample& seconds_per_sample) {
  const int32_t cap = effective_cap(global_batch, max_microbatches);
  const int32_t smallest = (global_batch + cap - 1) / cap;
  UnequalPlan plan;
  for (int32_t s = 0; s < stages; ++s) {
    std::vector<double> per_sample;
    for (int32_t b = smallest; b <= global_batch; ++b)
      per_sample.push_back(seconds_per_sample(s, b));
    const double best = *std::min_element(per_sample.begin(), per_sample.end());
    int32_t chosen = global_batch;
    for (int32_t b = smallest; b <= global_batch; ++b) {
      if (per_sample[b - smallest] <= best + 1e-9 * std::abs(best)) {
        chosen = b;
        break;
      }
    }
    const std::vector<int32_t> sizes = chunk_sizes(global_batch, chosen);
    plan.stages.push_back({sizes, sizes});
  }
  return plan;
}

GlobalDpResult global_dp_plan(const PopulationEvaluate& evaluate, int32_t stages,
                              int32_t global_batch, int32_t max_microbatches) {
  const int32_t cap = effective_cap(global_batch, max_microbatches);
  std::vector<UnequalPlan> plans;
  for (int32_t m = 1; m <= cap; ++m) plans.push_back(equal_plan(stages, global_batch, m));
  std::vector<double> seconds(plans.size());
  evaluate(plans, seconds);
  size_t best = 0;
  for (size_t i = 1; i < plans.size(); ++i) {
    if (seconds[i] < seconds[best]) best = i;
  }
  return {plans[best], static_cast<int32_t>(best) + 1, seconds[best]};
}

int64_t plan_space_size(int32_t stages, int32_t global_batch, int32_t max_microbatches) {
  const int64_t per_gene =
      composition_count(global_batch, effective_cap(global_batch, max_microbatches));
  int64_t total = 1;
  for (int32_t g = 0; g < 2 * stages; ++g) total = saturating_mul(total, per_gene);
  return total;
}

std::optional<ExhaustiveResult> exhaustive_search(
    const PopulationEvaluate& evaluate, int32_t stages, int32_t global_batch,
    int32_t max_microbatches, int64_t limit,
    const std::function<bool(const UnequalPlan&)>& feasible) {
  const int64_t space = plan_space_size(stages, global_batch, max_microbatches);
  if (space > limit || global_batch > 31) return std::nullopt;
  const std::vector<std::vector<int32_t>> genes =
      compositions(global_batch, effective_cap(global_batch, max_microbatches));
  const size_t gene_count = static_cast<size_t>(stages) * 2;
  std::vector<size_t> digit(gene_count, 0);  // the odometer; the last gene turns fastest
  ExhaustiveResult result;
  result.plans = space;
  result.seconds = std::numeric_limits<double>::infinity();
  bool have = false;
  constexpr size_t kChunk = 4096;
  std::vector<UnequalPlan> batch;
  std::vector<double> seconds;
  auto flush = [&] {
    if (batch.empty()) return;
    seconds.assign(batch.size(), std::numeric_limits<double>::infinity());
    evaluate(batch, seconds);
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!have || seconds[i] < result.seconds) {
        result.plan = batch[i];
        result.seconds = seconds[i];
        have = true;
      }
    }
    batch.clear();
  };
  for (int64_t index = 0; index < space; ++index) {
    UnequalPlan plan;
    plan.stages.resize(stages);
    for (size_t g = 0; g < gene_count; ++g) {
      StagePlan& stage = plan.stages[g / 2];
      (g % 2 == 0 ? stage.forward_sizes : stage.backward_sizes) = genes[digit[g]];
    }
    if (!feasible || feasible(plan)) batch.push_back(std::move(plan));
    if (batch.size() == kChunk) flush();
    for (size_t g = gene_count; g-- > 0;) {
      if (++digit[g] < genes.size()) break;
      digit[g] = 0;
    }
  }
  flush();
  if (!have) result.plan = equal_plan(stages, global_batch, 1);
  return result;
}

double one_f_one_b_seconds(const ResolvedScenario& setup) {
  ResolvedScenario one_f_one_b = setup;
  one_f_one_b.schedule.kind = proto::ONE_F_ONE_B;
  one_f_one_b.schedule.stage_plans = {};
  one_f_one_b.training.iterations = 1;
  const Program program = build_program(one_f_one_b);
  const ExecutionTimes times = run_analytic(program, one_f_one_b.cluster);
  return times.span_s();
}

}  // namespace pipetwin
