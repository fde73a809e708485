// A ResolvedScenario built in code for zero-bubble schedules: K devices, one layer per
// model chunk, every chunk's backward split into B and W, no communication cost. Each
// device's work per microbatch is fwd_s + bwd_input_s + bwd_weight_s whatever the number
// of chunks per device, and so is its stash, so the closed forms of docs/schedules.md hold
// exactly and peaks compare across schedules.
#pragma once

#include <random>

#include "uniform_setup.h"

namespace pipetwin::testing {

inline ResolvedScenario split_setup(proto::ScheduleKind kind, int stages, int microbatches,
                                    double fwd_s, double bwd_input_s, double bwd_weight_s,
                                    int virtual_stages = 1, double stash_bytes_per_sample = 100) {
  const int samples = 4;
  ResolvedScenario setup =
      uniform_setup(kind, stages, microbatches, fwd_s, bwd_input_s + bwd_weight_s, virtual_stages,
                    samples, stash_bytes_per_sample);
  for (ModelLayer& layer : setup.model.layers) {
    // A chunk holds 1/v of a stage's layers, and of its stash.
    layer.stash_bytes_per_sample = stash_bytes_per_sample / virtual_stages;
    layer.bwd_weight = LayerCost{};
    layer.bwd_weight->seconds_per_sample = bwd_weight_s / samples / virtual_stages;
  }
  return setup;
}

// The share of each stash that W holds from B until it ends.
inline void set_weight_stash_share(ResolvedScenario& setup, double share) {
  for (ModelLayer& layer : setup.model.layers) {
    layer.bwd_weight_stash_bytes_per_sample = share * layer.stash_bytes_per_sample;
  }
}

// K stages of random F, B and W (each stage its own, B and W splitting a random backward), a
// share `share` of the stash held by W.
template <class Rng>
ResolvedScenario random_split_stages(Rng& rng, proto::ScheduleKind kind, int stages,
                                     int microbatches, double share) {
  ResolvedScenario setup = split_setup(kind, stages, microbatches, 0.01, 0.01, 0.01);
  std::uniform_real_distribution<double> per_sample(1e-4, 1e-2);
  for (ModelLayer& layer : setup.model.layers) {
    layer.fwd.seconds_per_sample = per_sample(rng);
    layer.bwd.seconds_per_sample = per_sample(rng);
    layer.bwd_weight->seconds_per_sample =
        std::uniform_real_distribution<double>(0.05, 0.95)(rng) * layer.bwd.seconds_per_sample;
  }
  set_weight_stash_share(setup, share);
  return setup;
}

}  // namespace pipetwin::testing
