#include "sim/umpipe/full_model_check.h"

#include <cmath>

#include "sim/driver/simulate.h"
#include "sim/spec/errors.h"

namespace pipetwin {

bool evaluator_misses_model(const ResolvedScenario& setup) {
  const ClusterSpec& c = setup.cluster;
  return c.interference.any() || c.dispatch.issue_s > 0 || c.dispatch.wakeup_s > 0;
}

namespace {

double full_model_seconds(const ResolvedScenario& setup, const UmpipeSearchResult& result,
                          const UnequalPlan& plan) {
  ResolvedScenario s = setup;
  s.schedule.kind = proto::UMPIPE;
  s.schedule.stage_plans = plan;
  s.schedule.partition = result.partition;
  s.training.iterations = 1;
  s.freeze.enabled = false;
  try {
    return simulate_setup(s, {}).times.span_s();
  } catch (const RuntimeFailure&) {
    return INFINITY;  // out of memory
  }
}

}  // namespace

FullModelChoice choose_with_full_model(const ResolvedScenario& setup,
                                       const UmpipeSearchResult& result, double min_gain) {
  const UmpipeBaselineResults& b = result.baselines;
  const std::vector<std::pair<std::string, const UnequalPlan*>> plans = {
      {"search", &result.best},
      {"global greedy DP", &b.global_dp.plan},
      {"local greedy", &b.local_greedy_plan},
      {"GPipe", &b.gpipe_plan}};
  FullModelChoice choice, equal;  // equal: the reference
  choice.seconds = equal.seconds = INFINITY;
  for (const auto& [name, plan] : plans) {
    if (plan->stages.empty()) continue;
    const double seconds = full_model_seconds(setup, result, *plan);
    choice.candidates.emplace_back(name, seconds);
    // The reference: the scenario's own microbatches, the configuration a fitted
    // scenario was measured closest to.
    const bool reference = name == "GPipe";
    for (FullModelChoice* best : {&choice, reference ? &equal : nullptr}) {
      if (best == nullptr || !(seconds < best->seconds)) continue;
      best->seconds = seconds;
      best->chosen = name;
      best->plan = *plan;
    }
  }
  if (std::isfinite(equal.seconds) && choice.seconds * (1 + min_gain) > equal.seconds) {
    choice.seconds = equal.seconds;
    choice.chosen = equal.chosen;
    choice.plan = equal.plan;
  }
  choice.min_gain = min_gain;
  return choice;
}

}  // namespace pipetwin
