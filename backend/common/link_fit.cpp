#include "backend/common/link_fit.h"

#include <algorithm>
#include <stdexcept>

namespace pipetwin {

LinkFit fit_link(const std::vector<std::pair<double, double>>& samples) {
  if (samples.empty()) throw std::invalid_argument("fit_link: no samples");
  for (const auto& [bytes, seconds] : samples) {
    if (!(bytes > 0) || !(seconds > 0)) {
      throw std::invalid_argument("fit_link: each sample needs positive bytes and seconds");
    }
  }
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : samples) {
    const double w = 1 / (y * y);
    n += w;
    sx += w * x;
    sy += w * y;
    sxx += w * x * x;
    sxy += w * x * y;
  }
  // One size (or all equal) leaves the slope undefined (0/0 is NaN, not > 0): fallback.
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  LinkFit fit;
  if (slope > 0) {
    fit.latency_s = std::max(0.0, (sy - slope * sx) / n);
    fit.bandwidth_bytes_per_s = 1 / slope;
    return fit;
  }
  const auto [small, large] = std::minmax_element(samples.begin(), samples.end());
  fit.bandwidth_bytes_per_s = large->first / large->second;
  fit.latency_s = std::max(0.0, small->second - small->first / fit.bandwidth_bytes_per_s);
  return fit;
}

}  // namespace pipetwin
