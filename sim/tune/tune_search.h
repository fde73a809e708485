// `pipetwin tune`'s search: every configuration of the space (tune_space.h) is resolved (the
// resolver's checks decide what can run) and timed by the fast evaluator (fast_estimate.h) in
// worker processes; those within the memory limit form the Pareto front of throughput against
// peak memory; the fastest `refine` of them are then simulated with the analytic engine, whose
// times and memory decide the best. The scenario's own configuration is simulated too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/driver/resource_limits.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/spec/resolved_scenario.h"
#include "sim/tune/tune_config.h"
#include "sim/tune/tune_space.h"

namespace pipetwin {

struct TuneOptions {
  std::vector<std::string> fixes;  // --fix FIELD=VALUE[,VALUE...]
  double max_memory_bytes = 0;     // 0: the smallest GPU's memory
  int32_t refine = 10;             // how many of the fast evaluator's best the engine simulates
  int32_t workers = 0;             // processes for the fast evaluation; 0: this process's CPUs
  // The engine's limits: a configuration whose Program would be larger is not simulated (it
  // is skipped with that reason); the scenario's own must fit.
  ResourceLimits limits;
};

enum class Evaluator { kFast, kAnalytic, kSimgrid };
const char* evaluator_name(Evaluator evaluator);

struct TunePoint {
  TuneConfig config;
  double iteration_time_s = 0;
  double throughput_samples_per_s = 0;
  int64_t peak_memory_bytes = 0;
  Evaluator evaluator = Evaluator::kFast;
};

struct TuneResult {
  double memory_limit_bytes = 0;
  int64_t evaluated = 0;  // configurations the fast evaluator (or the engine) timed
  SkipCounts skipped;
  std::vector<TunePoint> pareto;      // within the limit, by peak memory; each faster than the last
  std::vector<TunePoint> refined;     // the engine's, fastest first (over the limit included)
  std::optional<TunePoint> best;      // the fastest refined one within the limit
  TunePoint own;                      // the scenario's own configuration, by the engine
  std::optional<TunePoint> own_fast;  // and by the fast evaluator, where it has a model
  // Where the engine's best stood in the fast evaluator's ranking (1: first); 0 without one.
  int32_t best_fast_rank = 0;
};

// The scenario with `config` applied (as its --set fields; explicit partitions, stage plans and
// replicas dropped, one iteration); nullopt with `reason` (numbers dropped, so that like
// reasons count together) when the resolver rejects it.
std::optional<ResolvedScenario> apply_config(const LoadedScenario& loaded, const TuneConfig& config,
                                             std::string& reason);

// One configuration with the analytic engine: its iteration time and its peak memory.
TunePoint simulate_config(const ResolvedScenario& setup, const TuneConfig& config,
                          Evaluator evaluator, const ResourceLimits& limits = {});

// Whether `evaluator` may simulate `setup` within `limits` (sim/driver/resource_limits.h).
bool fits_engine(const ResolvedScenario& setup, Evaluator evaluator, const ResourceLimits& limits);

// The reason counted for a configuration fits_engine refuses.
inline constexpr const char* kTooLargeForTheEngine =
    "too large to simulate whole (--max-instructions, or the machine's memory)";

// The search. Throws InputError for a bad --fix or limit.
TuneResult tune(const LoadedScenario& loaded, const TuneOptions& options);

}  // namespace pipetwin
