// `pipetwin straggler`: one slow device at every position and speed factor asked, each a point
// of a sweep (both engines, in parallel), and the step's slowdown attributed as the straggler
// literature does (ByteDance's what-if analysis, OSDI'25): to the pipeline stage, the
// data-parallel and the tensor-parallel rank the slow device holds, and, for the worst point,
// to the op kinds whose time grew.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "sim/driver/resource_limits.h"

namespace pipetwin {

struct StragglerRequest {
  std::string scenario;
  std::vector<std::string> overrides;
  std::vector<double> factors;  // compute_scale of the slow device, each in (0, 1]
  // Device ids ("0-7,64"); empty: every GPU of data-parallel replica 0 (the others mirror it).
  std::string devices;
  // Scale the device's links instead of its compute (link_scale).
  bool links = false;
  std::string engine = "analytic";
  int jobs = 0;
  ResourceLimits limits;
};

// Where a device sits in the layout (docs/architecture.md, "device copies").
struct DevicePlace {
  int32_t stage = 0;  // pipeline rank
  int32_t data_parallel_rank = 0;
  int32_t tensor_rank = 0;
  int32_t context_rank = 0;
};

struct StragglerPoint {
  int32_t device = 0;
  double factor = 1;
  DevicePlace place;
  double step_s = 0;
  double slowdown = 0;  // step over the baseline's
  std::string error;    // the point failed
};

struct StragglerRun {
  std::string name;
  std::string engine;
  double baseline_step_s = 0;
  std::vector<StragglerPoint> points;  // slowest first
  // Per factor, the largest slowdown with the slow device on each stage, data-parallel rank
  // and tensor-parallel rank.
  std::map<double, std::map<int32_t, double>> by_stage, by_dp_rank, by_tp_rank;
  // The worst point's op kinds: each kind's time over all devices, slow over baseline (the
  // analytic engine's timing); and the per-device mean change of the time breakdown.
  std::map<std::string, double> by_op;
  std::map<std::string, double> breakdown_change_s;

  nlohmann::json json() const;
};

// Throws InputError for bad input.
StragglerRun run_straggler(const StragglerRequest& request);

void print_straggler(std::ostream& out, const StragglerRun& run);

}  // namespace pipetwin
