// Metrics of one run, computed from its Timeline alone (so they mean the same for a
// simulated and a measured run), or, for a simulated run, the same from its Program, times
// and memory curve, without building the timeline.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/driver/simulate.h"
#include "traces/timeline.h"

namespace pipetwin {

struct DeviceMetrics {
  int32_t id = 0;
  std::string name;
  double busy_s = 0;             // time the compute lane was running something
  double bubble_ratio = 0;       // 1 - busy / makespan
  double peak_memory_bytes = 0;  // from the "memory_bytes" counter
  // Point-to-point communication (spans on the send and recv lanes), after HTA: comm_s is
  // the time some transfer of the device was running (overlapping transfers count once);
  // exposed_comm_s the part of it during which its compute lane ran nothing, i.e.
  // communication not hidden by compute. A transfer's span is the transfer itself: time
  // spent waiting for the partner to arrive counts as neither.
  double comm_s = 0;
  double exposed_comm_s = 0;
  // 1 - exposed / comm: the share of the communication hidden by compute. Empty when the
  // device did not communicate (nothing to hide: neither 0 nor 1 would be true).
  std::optional<double> overlap_ratio;
  // Collectives (spans on the collective lane: data-parallel all-reduces, tensor-parallel
  // all-reduces, expert-parallel all-to-alls), counted the same way.
  double collective_s = 0;
  double exposed_collective_s = 0;
};

struct RunMetrics {
  double makespan_s = 0;  // all iterations, from the first start to the last end
  double iteration_time_s = 0;
  double throughput_samples_per_s = 0;
  double bubble_ratio = 0;          // idle share of the compute lanes, over all devices
  double comm_s = 0;                // the devices' comm_s, summed
  double exposed_comm_s = 0;        // the devices' exposed_comm_s, summed
  double collective_s = 0;          // the devices' collective_s, summed
  double exposed_collective_s = 0;  // the devices' exposed_collective_s, summed
  std::vector<DeviceMetrics> devices;
};

// From the first span start to the last span end (the makespan's window); (0, 0) without
// spans.
struct SpanExtent {
  double first_s = 0;
  double last_s = 0;
};
SpanExtent span_extent(const Timeline& timeline);

// `iterations` and `samples_per_iteration` come from the scenario: the timeline does not
// know how the minibatch was defined.
RunMetrics compute_metrics(const Timeline& timeline, int32_t iterations,
                           int64_t samples_per_iteration);

// The same metrics as those of the result's timeline, read from its Program, times and
// memory curve (the devices from result.timeline.devices, which is filled without spans).
RunMetrics compute_metrics(const SimulationResult& result, int32_t iterations,
                           int64_t samples_per_iteration);

// The metrics of a run of `iterations`, from runs of longer_iterations - 1 (`shorter`) and
// `longer_iterations` (`longer`) in the steady state, where every further iteration adds
// what the last one added: totals grow linearly, peaks stay, ratios follow from the totals.
RunMetrics extrapolate_metrics(const RunMetrics& shorter, const RunMetrics& longer,
                               int32_t longer_iterations, int64_t iterations,
                               int64_t samples_per_iteration);

}  // namespace pipetwin
