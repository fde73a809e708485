// Tiny hand-built pipelines for the tests of lowering's passes: K stages on K devices (per
// data-parallel replica), M equal microbatches of two samples each per replica, with round
// costs so that every field a pass writes can be checked by hand.
#pragma once

#include <string>
#include <vector>

#include "sim/program/program.h"
#include "sim/schedule/lowering.h"

namespace pipetwin::testing {

// FWD 1 s + 1 s per sample, BWD 2 s per sample, 10 bytes of activations and 100 of stash
// per sample, 1000 bytes of gradients and 500 of weights, a 3 s update.
inline PipelineLayout tiny_layout(int32_t stages, int32_t microbatches, int32_t replicas = 1) {
  PipelineLayout layout;
  layout.replicas = replicas;
  layout.devices_per_replica = stages;
  layout.num_devices = stages * replicas;
  layout.global_batch = 2 * microbatches * replicas;
  std::vector<SampleRange> ranges;
  for (int32_t m = 0; m < microbatches; ++m) ranges.push_back({2 * m, 2 * m + 2});
  for (int32_t s = 0; s < stages; ++s) {
    layout.stage_device.push_back(s);
    layout.fwd_ranges.push_back(ranges);
    layout.bwd_ranges.push_back(ranges);
    StageCost cost;
    cost.fwd = CostCurve::linear(1, 1);
    cost.bwd = CostCurve::linear(0, 2);
    cost.output_bytes_per_sample = 10;
    cost.stash_bytes_per_sample = 100;
    cost.gradient_bytes = 1000;
    cost.weight_bytes = 500;
    cost.optim_s = 3;
    layout.costs.push_back(cost);
  }
  layout.static_bytes.assign(layout.num_devices, 0);
  return layout;
}

// The text form of one lane's instructions, in order.
inline std::vector<std::string> lane_text(const Program& p, int device, Lane lane) {
  std::vector<std::string> out;
  const int l = device * kLaneCount + static_cast<int>(lane);
  for (int i = p.lane_begin[l]; i < p.lane_begin[l + 1]; ++i) out.push_back(p.text(i));
  return out;
}

// The instruction at `position` of one lane.
inline int32_t at(const Program& p, int device, Lane lane, int position) {
  return p.lane_begin[device * kLaneCount + static_cast<int>(lane)] + position;
}

// Texts of what instruction i waits for, in order.
inline std::vector<std::string> deps_text(const Program& p, int32_t i) {
  std::vector<std::string> out;
  for (int32_t d : p.deps_of(i)) out.push_back(p.text(d));
  return out;
}

}  // namespace pipetwin::testing
