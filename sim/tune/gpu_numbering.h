// Which GPU runs what once a one-replica layout is expanded: context parallelism copies layout
// device d onto d C + c, tensor parallelism each of those onto (d C + c) T + t
// (sim/schedule/device_copies.h); replica r's device d is layout device d + r x devices per
// replica. The fast evaluator prices each collective on the GPUs that hold it.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/spec/expert_folding.h"

namespace pipetwin {

struct GpuNumbering {
  int32_t tensor = 1, context = 1, per_replica = 1;
  int32_t gpu(int32_t device, int32_t c = 0, int32_t t = 0) const {
    return (device * context + c) * tensor + t;
  }
  std::vector<int32_t> tensor_group(int32_t device) const {
    std::vector<int32_t> g;
    for (int32_t t = 0; t < tensor; ++t) g.push_back(gpu(device, 0, t));
    return g;
  }
  std::vector<int32_t> context_group(int32_t device) const {
    std::vector<int32_t> g;
    for (int32_t c = 0; c < context; ++c) g.push_back(gpu(device, c));
    return g;
  }
  // An expert group (MoE parallel folding): the GPUs of `group_replicas` consecutive
  // replicas in the tensor and context runs of `runs` (sim/spec/expert_folding.h) that hold
  // GPU (device, 0, 0).
  std::vector<int32_t> expert_group(int32_t device, int32_t group_replicas,
                                    const ExpertGroupRuns& runs) const {
    std::vector<int32_t> g;
    for (int32_t r = 0; r < group_replicas; ++r) {
      for (int32_t c = 0; c < runs.context; ++c) {
        for (int32_t t = 0; t < runs.tensor; ++t) {
          g.push_back(gpu(device + r * per_replica, c, t));
        }
      }
    }
    return g;
  }
  // The GPUs holding the same routed experts as GPU (device, 0, 0): the same place in their
  // expert groups, every `step`-th replica.
  std::vector<int32_t> expert_holders(int32_t device, int32_t step, int32_t replicas,
                                      const ExpertGroupRuns& runs) const {
    std::vector<int32_t> g;
    for (int32_t r = 0; r < replicas; r += step) {
      for (int32_t c = 0; c < context; c += runs.context) {
        for (int32_t t = 0; t < tensor; t += runs.tensor_slots) {
          g.push_back(gpu(device + r * per_replica, c, t));
        }
      }
    }
    return g;
  }
  // The replicas r = first, first + step, ... below `replicas`, with their C GPUs when asked.
  std::vector<int32_t> replica_group(int32_t device, int32_t first, int32_t step, int32_t replicas,
                                     bool with_context) const {
    std::vector<int32_t> g;
    for (int32_t r = first; r < replicas; r += step) {
      for (int32_t c = 0; c < (with_context ? context : 1); ++c) {
        g.push_back(gpu(device + r * per_replica, c));
      }
    }
    return g;
  }
};

}  // namespace pipetwin
