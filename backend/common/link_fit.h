// The link model both simulators use, fitted to measurements: a message of b bytes takes
// latency + b / bandwidth. Shared by every backend that measures links (Gloo ranks in
// backend/torch, CUDA copies and NCCL in backend/cuda); plain C++, no torch, no CUDA.
#pragma once

#include <utility>
#include <vector>

namespace pipetwin {

struct LinkFit {
  double latency_s = 0;
  double bandwidth_bytes_per_s = 0;
};

// Fits (bytes, one-way seconds) samples by least squares on relative error (weights
// 1/t^2): plain least squares would let the largest messages decide everything and leave
// the latency, which small pipeline messages pay, to chance. If noise makes the slope
// non-positive (larger messages look no slower), the largest message gives the bandwidth
// and the smallest the latency. Latency is never negative. Throws std::invalid_argument
// for no samples or a sample with non-positive bytes or time.
LinkFit fit_link(const std::vector<std::pair<double, double>>& samples_bytes_seconds);

}  // namespace pipetwin
