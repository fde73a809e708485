// A whole training run as `pipetwin goodput` prices it (the scenario's `run` section, resolved):
// its length, its failures, its checkpoints and its restarts.
#pragma once

#include <cstdint>
#include <optional>

#include "sim/goodput/failure_model.h"

namespace pipetwin {

struct CheckpointSpec {
  int64_t interval_steps = 0;  // 0: the optimum
  bool asynchronous = false;   // snapshot to host memory, persisted under compute
  double node_bytes_per_s = 25e9;
  double storage_write_bytes_per_s = 2e12;
  double storage_read_bytes_per_s = 2e12;
};

struct RestartSpec {
  double detect_s = 120;
  double reschedule_s = 180;
  bool hot_spares = true;
  double replace_node_s = 1800;  // without hot spares, instead of reschedule_s
  double warmup_s = 180;
};

struct RunSpec {
  std::optional<double> tokens;
  std::optional<int64_t> steps;
  FailureModel failures;
  bool default_failures = true;  // Llama 3's table 5
  CheckpointSpec checkpoint;
  RestartSpec restart;
  double gpu_hour_cost = 0;
};

}  // namespace pipetwin
