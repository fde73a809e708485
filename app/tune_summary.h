// What `tune` prints: for people, the best configuration against the scenario's own, the
// Pareto front and the search's counts; for scripts, one JSON object.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "app/tune_run.h"

namespace pipetwin {

void print_tune_summary(std::ostream& out, const TuneRun& run);

// {scenario, best, own, own_fast, pareto, refined, simgrid, evaluated, skipped, wall_s,
//  memory_limit_bytes, best_fast_rank, speedup_over_own}; each configuration as
//  {set: [--set fields], name, iteration_time_s, throughput_samples_per_s, peak_memory_bytes,
//  evaluator}; best is null when nothing fits the memory limit.
nlohmann::json tune_json(const TuneRun& run);

}  // namespace pipetwin
