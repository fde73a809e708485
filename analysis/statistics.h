// Order statistics and means of measured values, as the analyses report them.
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace pipetwin {

// Linear interpolation between order statistics of sorted `sorted` (numpy's default); 0 when
// empty.
inline double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return percentile(values, 0.5);
}

// 0 when empty.
inline double mean(const std::vector<double>& values) {
  return values.empty() ? 0
                        : std::accumulate(values.begin(), values.end(), 0.0) /
                              static_cast<double>(values.size());
}

}  // namespace pipetwin
