// A ResolvedScenario built in code: K identical stages, one layer each, no communication cost.
// The closed forms of docs/schedules.md hold exactly on it.
#pragma once

#include "sim/spec/resolved_scenario.h"

namespace pipetwin::testing {

inline ResolvedScenario uniform_setup(proto::ScheduleKind kind, int stages, int microbatches,
                                      double fwd_s, double bwd_s, int virtual_stages = 1,
                                      int samples_per_microbatch = 4,
                                      double stash_bytes_per_sample = 100) {
  ResolvedScenario setup;
  setup.name = "uniform";
  for (int d = 0; d < stages; ++d) {
    setup.cluster.devices.push_back({d, 0, "gpu" + std::to_string(d), 1e15, 1e15});
  }
  setup.cluster.gpus_per_node = stages;
  setup.cluster.intra_node = {1e12, 0.0};
  const int chunks = stages * virtual_stages;
  for (int l = 0; l < chunks; ++l) {
    ModelLayer layer;
    layer.name = "l";  // appended: GCC 12 warns (-Wrestrict, falsely) on "l" + a temporary
    layer.name += std::to_string(l);
    // Each chunk does 1/v of a stage's work, so a device's work is fwd_s + bwd_s.
    layer.fwd.seconds_per_sample = fwd_s / samples_per_microbatch / virtual_stages;
    layer.bwd.seconds_per_sample = bwd_s / samples_per_microbatch / virtual_stages;
    layer.stash_bytes_per_sample = stash_bytes_per_sample;
    if (l + 1 < chunks) layer.consumers = {l + 1};
    setup.model.layers.push_back(layer);
  }
  setup.training = {microbatches * samples_per_microbatch, microbatches, 1, proto::SGD};
  setup.schedule.kind = kind;
  setup.schedule.stages = stages;
  setup.schedule.virtual_stages = virtual_stages;
  return setup;
}

}  // namespace pipetwin::testing
