#include "backend/common/gemm_fit.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace pipetwin {
namespace {

void check_samples(const std::vector<GemmSample>& samples, const char* who) {
  if (samples.empty()) throw std::invalid_argument(std::string(who) + ": no samples");
  for (const GemmSample& s : samples) {
    if (s.m < 1 || s.n < 1 || s.k < 1 || !(s.seconds > 0)) {
      throw std::invalid_argument(std::string(who) +
                                  ": a sample with a non-positive dimension or time");
    }
  }
}

double mean_relative_error(const std::vector<GemmSample>& samples, const GemmCurve& curve) {
  double sum = 0;
  for (const GemmSample& s : samples) {
    const double predicted = gemm_seconds(curve, static_cast<double>(s.m), static_cast<double>(s.n),
                                          static_cast<double>(s.k));
    sum += std::abs(predicted / s.seconds - 1);
  }
  return sum / static_cast<double>(samples.size());
}

}  // namespace

double fit_gemm_peak_fraction(const std::vector<GemmSample>& samples, GemmCurve curve) {
  check_samples(samples, "fit_gemm_peak_fraction");
  if (!(curve.peak_flops > 0)) {
    throw std::invalid_argument("fit_gemm_peak_fraction: peak must be > 0");
  }
  // A grid over (0, 1], then the same around its best point: the error is piecewise smooth
  // in the fraction (a GEMM turns memory-bound below some fraction), so no bracket is safe.
  double best = 1, best_error = INFINITY;
  auto scan = [&](double from, double to, int steps) {
    for (int i = 0; i <= steps; ++i) {
      curve.peak_fraction = std::clamp(from + (to - from) * i / steps, 1e-4, 1.0);
      const double error = mean_relative_error(samples, curve);
      if (error < best_error) best_error = error, best = curve.peak_fraction;
    }
  };
  scan(0, 1, 1000);
  scan(best - 1e-3, best + 1e-3, 200);
  return best;
}

GemmEfficiencyFit fit_gemm_efficiency(const std::vector<GemmSample>& samples, double peak_flops) {
  if (samples.empty()) throw std::invalid_argument("fit_gemm_efficiency: no samples");
  if (!(peak_flops > 0)) throw std::invalid_argument("fit_gemm_efficiency: peak must be > 0");
  // y = t / (2 n k) = (m + h) / (peak * e) = a + b m; weights 1/y^2 (relative error), so
  // that small GEMMs, which set h, count as much as large ones.
  double sw = 0, swx = 0, swy = 0, swxx = 0, swxy = 0;
  GemmEfficiencyFit fit;
  for (const GemmSample& s : samples) {
    if (s.m < 1 || s.n < 1 || s.k < 1 || !(s.seconds > 0)) {
      throw std::invalid_argument(
          "fit_gemm_efficiency: a sample with a non-positive dimension "
          "or time");
    }
    const double x = static_cast<double>(s.m);
    const double y = s.seconds / (2.0 * s.n * s.k);
    const double w = 1 / (y * y);
    sw += w, swx += w * x, swy += w * y, swxx += w * x * x, swxy += w * x * y;
    fit.largest_tflops = std::max(fit.largest_tflops, s.flops() / s.seconds / 1e12);
  }
  const double det = sw * swxx - swx * swx;
  double a = 0, b = 0;
  if (det > 0) {
    b = (sw * swxy - swx * swy) / det;
    a = (swy - b * swx) / sw;
  }
  if (!(b > 0)) {  // one m, or noise: a flat efficiency from the mean throughput
    b = swy / swx;
    a = 0;
  }
  a = std::max(a, 0.0);
  fit.efficiency = 1 / (peak_flops * b);
  fit.half_rows = a / b;
  return fit;
}

}  // namespace pipetwin
