// Where the per-layer gradient statistics that drive freezing come from, interval by
// interval: synthetic decaying norms for what-if runs, or a freeze log a real run wrote.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pipetwin {

// Accumulated L1 gradient norm of every layer over each interval: [interval][layer].
using IntervalNorms = std::vector<std::vector<double>>;

struct SyntheticGradientModel {
  uint64_t seed = 1;
  double time_constant = 100;  // iterations
  double depth_factor = 2;     // tau_l = time_constant * (1 + depth_factor * l / (L - 1))
  double noise = 0.02;         // relative, Gaussian, per iteration
  double floor = 0.1;          // the plateau a converged layer's norm settles at
};

// Layer l at iteration t has norm (floor + (1 - floor) exp(-t / tau_l)) (1 + noise N(0, 1)),
// summed over each interval of `interval` iterations; `intervals` of them. Deterministic
// for a seed.
IntervalNorms synthetic_interval_norms(const SyntheticGradientModel& model, int32_t layers,
                                       int32_t interval, int32_t intervals);

// A freeze log: "# comment" lines, then "layers L", "interval_iterations I", and one line
// per interval: "interval K n_0 n_1 ... n_(L-1)". Throws InputError naming `name`, the line
// and what is wrong; a log for another model (other layer count) is an error.
struct FreezeLog {
  int32_t layers = 0;
  int32_t interval_iterations = 0;
  IntervalNorms norms;
};
FreezeLog parse_freeze_log(const std::string& text, const std::string& name,
                           int32_t expected_layers);
std::string format_freeze_log(const FreezeLog& log);

}  // namespace pipetwin
