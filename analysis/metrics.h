// Metrics of one run, computed from its Timeline alone (so they mean the same for a
// simulated and a measured run).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/timeline.h"

namespace pipetwin {

struct DeviceMetrics {
  int32_t id = 0;
  std::string name;
  double busy_s = 0;             // time the compute lane was running something
  double bubble_ratio = 0;       // 1 - busy / makespan
  double peak_memory_bytes = 0;  // from the "memory_bytes" counter
};

struct RunMetrics {
  double makespan_s = 0;  // all iterations, from the first start to the last end
  double iteration_time_s = 0;
  double throughput_samples_per_s = 0;
  double bubble_ratio = 0;  // idle share of the compute lanes, over all devices
  std::vector<DeviceMetrics> devices;
};

// `iterations` and `samples_per_iteration` come from the scenario: the timeline does not
// know how the minibatch was defined.
RunMetrics compute_metrics(const Timeline& timeline, int32_t iterations,
                           int64_t samples_per_iteration);

}  // namespace pipetwin
