#include "sim/freeze/gradient_norms.h"

#include <cmath>
#include <random>

namespace pipetwin {

IntervalNorms synthetic_interval_norms(const SyntheticGradientModel& model, int32_t layers,
                                       int32_t interval, int32_t intervals) {
  std::mt19937_64 rng(model.seed);
  std::normal_distribution<double> gaussian(0, 1);
  IntervalNorms norms(intervals, std::vector<double>(layers, 0));
  for (int32_t k = 0; k < intervals; ++k) {
    for (int32_t t = k * interval; t < (k + 1) * interval; ++t) {
      for (int32_t l = 0; l < layers; ++l) {
        const double depth = layers > 1 ? static_cast<double>(l) / (layers - 1) : 0;
        const double tau = model.time_constant * (1 + model.depth_factor * depth);
        const double clean = model.floor + (1 - model.floor) * std::exp(-t / tau);
        norms[k][l] += clean * std::max(0.0, 1 + model.noise * gaussian(rng));
      }
    }
  }
  return norms;
}

}  // namespace pipetwin
