// The baselines UMPIPE is compared with (TPDS 2024; docs/umpipe.md), each a plan the
// DGAP search is seeded with, so that the search never reports worse than any of them:
//   * equal microbatches under GPipe: equal_plan with the scenario's microbatch count;
//   * equal microbatches under 1F1B (PipeDream-flush): a different order, not an
//     UnequalPlan, so it is simulated (one_f_one_b_seconds);
//   * local greedy: every stage picks its own best microbatch size;
//   * global greedy DP: the best equal plan over the microbatch count;
//   * exhaustive search, where the space of plans is small.
// The functions here take the evaluation as callbacks, so they work with any evaluator.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "sim/spec/resolved_scenario.h"
#include "sim/spec/unequal_plan.h"
#include "sim/umpipe/dgap.h"

namespace pipetwin {

// Seconds per sample of stage `stage` at microbatch size b (forward + backward).
using StageSecondsPerSample = std::function<double(int32_t stage, int32_t b)>;

// `global_batch` in chunks of b, the remainder last: {b, ..., b, global_batch % b}.
std::vector<int32_t> chunk_sizes(int32_t global_batch, int32_t b);

// Local greedy: stage s takes the microbatch size b that minimises its own
// seconds_per_sample(s, b), over b in [ceil(batch / max_microbatches), batch] (so at most
// max_microbatches chunks; 0 = no cap), and cuts the batch into chunks of b (the remainder
// last), the same cut in both directions. Among sizes within 1e-9 (relative) of the
// minimum it takes the smallest: the size at which the stage's throughput saturates. Each
// stage decides alone: the bubble and the other stages play no part.
UnequalPlan local_greedy_plan(int32_t stages, int32_t global_batch, int32_t max_microbatches,
                              const StageSecondsPerSample& seconds_per_sample);

struct GlobalDpResult {
  UnequalPlan plan;
  int32_t microbatches = 0;
  double seconds = 0;
};

// Global greedy DP: the paper's "global" baseline picks one microbatch size for the whole
// pipeline by its effect on the pipeline's iteration time (fill, drain and the slowest
// stage included), where local greedy looks at each stage alone. With one size everywhere
// the plan is fixed by the microbatch count M, so the dynamic programme over the size
// reduces to evaluating the equal plan for every M in 1..max_microbatches (0 = the batch),
// all in one population, and keeping the fastest (the smallest M among equals).
GlobalDpResult global_dp_plan(const PopulationEvaluate& evaluate, int32_t stages,
                              int32_t global_batch, int32_t max_microbatches);

// How many plans there are: (compositions of the batch into at most max_microbatches
// parts)^(2 * stages), saturating at INT64_MAX.
int64_t plan_space_size(int32_t stages, int32_t global_batch, int32_t max_microbatches);

struct ExhaustiveResult {
  UnequalPlan plan;
  double seconds = 0;  // +inf when no plan is feasible
  int64_t plans = 0;   // the size of the space
};

inline constexpr int64_t kExhaustiveLimit = 200'000;

// Every plan (each stage and direction any composition of the batch into at most
// max_microbatches parts; 0 = no cap), evaluated in populations of 4096; the fastest, the
// first in enumeration order among equals. nullopt when the space holds more than `limit`
// plans. `feasible`, when given, excludes plans as in DGAP.
std::optional<ExhaustiveResult> exhaustive_search(
    const PopulationEvaluate& evaluate, int32_t stages, int32_t global_batch,
    int32_t max_microbatches, int64_t limit = kExhaustiveLimit,
    const std::function<bool(const UnequalPlan&)>& feasible = {});

// The 1F1B baseline: the scenario with kind ONE_F_ONE_B (its microbatch count, no stage
// plans) and one iteration, lowered by build_program and run by the analytic executor; its
// makespan, comparable with PlanEvaluator::iteration_time.
double one_f_one_b_seconds(const ResolvedScenario& setup);

}  // namespace pipetwin
