// `pipetwin profile`: per-layer forward and backward times of a zoo model measured with
// LibTorch at several microbatch sizes (warm-up, then the median of repeats), with the
// bytes each layer outputs and holds. Torch-free header.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

struct LayerProfile {
  std::string name;
  std::vector<std::pair<int, double>> fwd_s;  // (batch, median seconds)
  std::vector<std::pair<int, double>> bwd_s;
  int64_t activation_bytes_per_sample = 0;  // the layer's output
  int64_t parameter_bytes = 0;
  double optim_s = 0;  // median optimizer step over the layer's parameters
};

// `load_threads` threads keep other cores busy meanwhile (the other ranks of a run).
// Throws InputError for a model the backend cannot build.
std::vector<LayerProfile> profile_layers(const ResolvedScenario& setup,
                                         const std::vector<int>& batches, int warmup, int repeats,
                                         int load_threads = 0);

}  // namespace pipetwin
