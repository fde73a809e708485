// The resolved model every source (explicit layers, PipeDream profile, zoo) turns into:
// a chain of layers in topological order with per-sample costs and sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pipetwin {

// Cost of one pass of a layer for b samples on a device of `device_flops` FLOP/s:
//   seconds = b * (seconds_per_sample + flops_per_sample / device_flops)
// Sources that measured times fill seconds_per_sample; sources that count FLOPs fill
// flops_per_sample (device_flops already includes the zoo's efficiency factor).
struct LayerCost {
  double seconds_per_sample = 0;
  double flops_per_sample = 0;

  double seconds(double samples, double device_flops) const {
    double per_sample = seconds_per_sample;
    if (flops_per_sample > 0) per_sample += flops_per_sample / device_flops;
    return samples * per_sample;
  }
};

struct ModelLayer {
  std::string name;
  LayerCost fwd;
  LayerCost bwd;
  double activation_bytes_per_sample = 0;  // this layer's output
  double stash_bytes_per_sample = 0;       // what the backward needs kept
  int64_t parameter_bytes = 0;             // fp32 weights
  // Indices (into ModelSpec::layers) of the later layers that read this layer's output.
  // A chain has {i + 1}; a DAG (ResNet branches) may have several. The bytes crossing a
  // cut between layer k and k+1 are the outputs of layers <= k read by a layer > k.
  std::vector<int> consumers;
};

struct ModelSpec {
  std::vector<ModelLayer> layers;
  // Fraction of the device's peak FLOP/s that FLOP-counted layers reach (zoo models).
  double efficiency = 1.0;
};

}  // namespace pipetwin
