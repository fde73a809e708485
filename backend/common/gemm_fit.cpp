#include "backend/common/gemm_fit.h"

#include <algorithm>
#include <stdexcept>

namespace pipetwin {

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
