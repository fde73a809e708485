// The zoo's compute model fitted to measured GEMMs: a GEMM of m rows reaches
// efficiency * m / (m + h) of the GPU's peak, so that t = 2 n k (m + h) / (peak * efficiency)
// is a line in m per unit of 2 n k. Fitted across shapes by least squares on relative
// error. Also the GEMM curve's one fitted number. Shared by `pipetwin calibrate --backend cuda`;
// plain C++, no CUDA.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/model/gemm_curve.h"

namespace pipetwin {

struct GemmSample {
  int64_t m = 0, n = 0, k = 0;
  double seconds = 0;
  double flops() const { return 2.0 * m * n * k; }
};

struct GemmEfficiencyFit {
  double efficiency = 0;      // of `peak_flops`, at large m
  double half_rows = 0;       // h: rows at which half of that is reached
  double largest_tflops = 0;  // the fastest sample's throughput
};

// Throws std::invalid_argument for no samples, a non-positive dimension or time, or
// non-positive peak.
GemmEfficiencyFit fit_gemm_efficiency(const std::vector<GemmSample>& samples, double peak_flops);

// The GEMM curve's peak_fraction (cluster.gpu.gemm_efficiency, sim/model/gemm_curve.h) that
// times `samples` with the smallest mean relative error; `curve` gives the rest of the curve.
// Throws std::invalid_argument as fit_gemm_efficiency does.
double fit_gemm_peak_fraction(const std::vector<GemmSample>& samples, GemmCurve curve);

// The zoo's utilization_half_batch (in samples) for rows per sample (seq_len for GPT).
inline double half_batch_samples(const GemmEfficiencyFit& fit, double rows_per_sample) {
  return rows_per_sample > 0 ? fit.half_rows / rows_per_sample : 0;
}

}  // namespace pipetwin
