// `pipetwin goodput`: a whole training run from one simulated step. The step's time and the
// model's checkpoint bytes, the scenario's `run` section (failures, checkpoints, restarts) and
// the run's length give the expected wall clock, GPU-hours, effective training time ratio
// (ETTR) and cost, in closed form and by Monte Carlo over failure arrivals (sim/goodput/).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/driver/engine.h"
#include "sim/goodput/goodput_model.h"
#include "sim/goodput/goodput_monte_carlo.h"
#include "sim/goodput/run_spec.h"
#include "sim/driver/resource_limits.h"

namespace pipetwin {

struct GoodputRequest {
  std::string scenario;
  std::vector<std::string> overrides;
  // Over the scenario's run section.
  std::optional<double> tokens;
  std::optional<int64_t> steps;
  std::optional<double> gpu_hour_cost;
  int32_t monte_carlo_runs = 10000;
  uint64_t seed = 1;
  Engine engine = Engine::kAnalytic;
  ResourceLimits limits;
  // The report's curves: ETTR by checkpoint interval and by cluster size, and days to train by
  // GPUs (which simulates the scenario again with fewer and more data-parallel replicas).
  bool curves = false;
};

// How the run is checkpointed and restarted, from the model's bytes and the cluster.
struct CheckpointCosts {
  double bytes = 0;       // weights and optimizer state, every shard once
  double write_s = 0;     // to storage, all nodes at once
  double snapshot_s = 0;  // device to host memory (asynchronous checkpoints)
  double load_s = 0;      // from storage, on restart
};

struct GoodputRun {
  std::string name;
  std::string engine;
  int64_t gpus = 0;
  int64_t nodes = 0;
  double step_s = 0;
  double tokens_per_step = 0;  // 0: the model has no sequence length
  RunSpec spec;
  double failures_per_hour = 0;
  double mttf_h = 0;
  CheckpointCosts checkpoint;
  double restart_s = 0;  // detection, rescheduling, load, warm-up
  RunPlan plan;
  GoodputEstimate estimate;
  double optimal_interval_s = 0;  // of an infinite run (Young/Daly's optimum)
  double young_interval_s = 0;
  MonteCarloSummary monte_carlo;
  // With GoodputRequest::curves.
  std::vector<std::pair<double, double>> ettr_by_interval_s;
  std::vector<std::pair<double, double>> ettr_by_gpus;
  std::vector<std::pair<double, double>> days_by_gpus;

  double days() const { return estimate.expected_s / 86400; }
  double gpu_hours() const { return estimate.expected_s / 3600 * static_cast<double>(gpus); }
  // The object `goodput --json` prints.
  nlohmann::json json() const;
};

// Throws InputError for bad input (the message names the file, line and field).
GoodputRun run_goodput(const GoodputRequest& request);

// The table `pipetwin goodput` prints.
void print_goodput(std::ostream& out, const GoodputRun& run);

}  // namespace pipetwin
