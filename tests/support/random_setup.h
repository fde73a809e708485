// Random but valid scenarios for property tests: stages, microbatches, per-layer costs,
// activation bytes, link bandwidths and latencies, nodes, and the schedule kind.
#pragma once

#include <algorithm>
#include <random>

#include "sim/spec/resolved_scenario.h"

namespace pipetwin::testing {

// A random composition of `batch` into at most `max_parts` positive sizes.
inline std::vector<int32_t> random_sizes(std::mt19937& rng, int32_t batch, int32_t max_parts = 12) {
  const int32_t parts = std::uniform_int_distribution<int32_t>(1, std::min(batch, max_parts))(rng);
  std::vector<int32_t> cuts;  // distinct cut points in [1, batch - 1]
  for (int32_t c = 1; c < batch; ++c) cuts.push_back(c);
  std::shuffle(cuts.begin(), cuts.end(), rng);
  cuts.resize(parts - 1);
  std::sort(cuts.begin(), cuts.end());
  std::vector<int32_t> sizes;
  int32_t previous = 0;
  for (int32_t c : cuts) {
    sizes.push_back(c - previous);
    previous = c;
  }
  sizes.push_back(batch - previous);
  return sizes;
}

inline UnequalPlan random_plan(std::mt19937& rng, int32_t stages, int32_t batch) {
  UnequalPlan plan;
  for (int32_t s = 0; s < stages; ++s) {
    plan.stages.push_back({random_sizes(rng, batch), random_sizes(rng, batch)});
  }
  return plan;
}

inline ResolvedScenario random_setup(std::mt19937& rng, proto::ScheduleKind kind) {
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  auto integer = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  ResolvedScenario setup;
  setup.name = "random";
  // DualPipe: an even number of stages, an even number of microbatches, at least twice
  // the stages.
  const int stages = kind == proto::DUALPIPE ? 2 * integer(1, 3) : integer(2, 6);
  const int v = kind == proto::INTERLEAVED_ONE_F_ONE_B ? integer(2, 3)
                : kind == proto::ZB_V                  ? 2
                                                       : 1;  // chunks per device
  const int replicas = integer(1, 3);
  const int gpus_per_node = integer(1, stages * replicas);
  const int nodes = (stages * replicas + gpus_per_node - 1) / gpus_per_node;
  setup.cluster.nodes = nodes;
  setup.cluster.gpus_per_node = gpus_per_node;
  for (int d = 0; d < nodes * gpus_per_node; ++d) {
    setup.cluster.devices.push_back(
        {d, d / gpus_per_node, "gpu" + std::to_string(d), uniform(50, 500) * 1e12, 1e15});
  }
  setup.cluster.intra_node = {uniform(50, 500) * 1e9, uniform(0, 5) * 1e-6};
  setup.cluster.inter_node = {uniform(5, 50) * 1e9, uniform(1, 10) * 1e-6};
  const int layers = stages * v + integer(0, 6);
  for (int l = 0; l < layers; ++l) {
    ModelLayer layer;
    layer.name = "l";  // appended: GCC 12 warns (-Wrestrict, falsely) on "l" + a temporary
    layer.name += std::to_string(l);
    layer.fwd.seconds_per_sample = uniform(1e-5, 1e-3);
    layer.bwd.seconds_per_sample = uniform(1e-5, 2e-3);
    if (integer(0, 2) == 0) layer.fwd.flops_per_sample = uniform(1e9, 1e11);  // device speeds
    layer.activation_bytes_per_sample = integer(0, 4) == 0 ? 0 : uniform(1e3, 1e8);
    layer.stash_bytes_per_sample = layer.activation_bytes_per_sample;
    layer.parameter_bytes = integer(0, 3) == 0 ? 0 : integer(1, 1 << 30);
    if (l + 1 < layers) layer.consumers = {l + 1};
    setup.model.layers.push_back(layer);
  }
  const int microbatches = kind == proto::INTERLEAVED_ONE_F_ONE_B ? stages * integer(1, 4)
                           : kind == proto::DUALPIPE              ? 2 * integer(stages, 8)
                                                                  : integer(1, 16);
  setup.training = {replicas * microbatches * integer(1, 8), microbatches, integer(1, 2),
                    proto::ADAM, replicas};
  setup.schedule.kind = kind;
  setup.schedule.stages = stages;
  setup.schedule.virtual_stages = v;
  if (is_zero_bubble(kind)) {  // W's part of each backward, and of each stash
    for (ModelLayer& layer : setup.model.layers) {
      if (integer(0, 3) == 0) continue;  // the default: half, and the whole stash
      layer.bwd_weight = LayerCost{};
      layer.bwd_weight->seconds_per_sample = uniform(0, 1) * layer.bwd.seconds_per_sample;
      layer.bwd_weight_stash_bytes_per_sample = uniform(0, 1) * layer.stash_bytes_per_sample;
    }
  }
  if (kind == proto::UMPIPE) {
    setup.schedule.stage_plans = random_plan(rng, stages, setup.training.global_batch / replicas);
    for (ModelLayer& layer : setup.model.layers) {  // a fixed cost per microbatch
      layer.fwd.fixed_s = integer(0, 1) ? uniform(0, 2e-3) : 0;
      layer.bwd.fixed_s = integer(0, 1) ? uniform(0, 4e-3) : 0;
    }
  }
  return setup;
}

// PipeFB on a random scenario: twice the devices (a forward and a backward device per
// stage, all in one node), one replica.
inline ResolvedScenario random_pipefb_setup(std::mt19937& rng, bool recompute) {
  ResolvedScenario setup = random_setup(rng, proto::ONE_F_ONE_B);
  setup.schedule.kind = proto::PIPEFB;
  setup.schedule.pipefb_recompute = recompute;
  setup.training.data_parallel = 1;
  setup.training.global_batch = setup.training.microbatches * 3;
  const int devices = 2 * setup.schedule.stages;
  setup.cluster.devices.clear();
  setup.cluster.nodes = 1;
  setup.cluster.gpus_per_node = devices;
  for (int d = 0; d < devices; ++d) {
    setup.cluster.devices.push_back({d, 0, "gpu" + std::to_string(d), 1e14, 1e15});
  }
  return setup;
}

}  // namespace pipetwin::testing
