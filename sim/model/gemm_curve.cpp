#include "sim/model/gemm_curve.h"

#include <algorithm>
#include <cmath>

namespace pipetwin {
namespace {

constexpr double kBytesPerElement = 2;  // the 16-bit result

// Waves of tiles over the multiprocessors, each tile_a x tile_b of the a x b result.
double tile_waves(double a, double b, double count, double tile_a, double tile_b, int sms) {
  const double tiles = std::ceil(a / tile_a) * std::ceil(b / tile_b) * count;
  return std::ceil(tiles / sms);
}

}  // namespace

double gemm_seconds(const GemmCurve& curve, double m, double n, double k, double count) {
  if (m <= 0 || n <= 0 || k <= 0 || count <= 0) return 0;
  const double flops = 2 * m * n * k * count;
  const double rate = curve.peak_flops * curve.peak_fraction;
  double compute = flops / rate;
  if (curve.sm_count > 0) {
    const double tm = curve.tile_m, tn = curve.tile_n;
    const double waves = std::min(tile_waves(m, n, count, tm, tn, curve.sm_count),
                                  tile_waves(n, m, count, tm, tn, curve.sm_count));
    // A tile's main loop over k, then its epilogue: the 16-bit result tile written out at the
    // multiprocessor's share of the memory bandwidth, which a short k no longer hides.
    const double epilogue =
        curve.memory_bytes_per_s > 0
            ? kBytesPerElement * tm * tn / (curve.memory_bytes_per_s / curve.sm_count)
            : 0.0;
    compute = waves * (2 * tm * tn * k / (rate / curve.sm_count) + epilogue);
  }
  if (curve.memory_bytes_per_s <= 0) return compute;
  const double bytes = (curve.operand_bytes * (m * k + k * n) + kBytesPerElement * m * n) * count;
  return std::max(compute, bytes / curve.memory_bytes_per_s);
}

double gemm_efficiency(const GemmCurve& curve, double m, double n, double k, double count) {
  const double seconds = gemm_seconds(curve, m, n, k, count);
  return seconds > 0 ? 2 * m * n * k * count / seconds / curve.peak_flops : 0;
}

}  // namespace pipetwin
