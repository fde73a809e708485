#include "sim/partition/balanced_partition.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace pipetwin {

std::vector<int32_t> balanced_partition(const std::vector<double>& layer_times, int32_t parts) {
  const int32_t n = static_cast<int32_t>(layer_times.size());
  if (parts < 1 || parts > n) {
    throw std::invalid_argument("balanced_partition: need 1 <= parts <= layers");
  }
  std::vector<double> prefix(n + 1, 0.0);
  for (int32_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + layer_times[i];
  auto sum = [&](int32_t from, int32_t to) { return prefix[to] - prefix[from]; };

  const double inf = std::numeric_limits<double>::infinity();
  // best[g][i]: smallest bottleneck placing the first i layers into g groups.
  std::vector<std::vector<double>> best(parts + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int32_t>> cut(parts + 1, std::vector<int32_t>(n + 1, -1));
  best[0][0] = 0.0;
  for (int32_t g = 1; g <= parts; ++g) {
    // Leave at least one layer for each of the remaining groups.
    for (int32_t i = g; i <= n - (parts - g); ++i) {
      for (int32_t j = g - 1; j < i; ++j) {
        const double candidate = std::max(best[g - 1][j], sum(j, i));
        if (candidate < best[g][i]) {
          best[g][i] = candidate;
          cut[g][i] = j;
        }
      }
    }
  }
  std::vector<int32_t> counts(parts);
  for (int32_t g = parts, i = n; g > 0; --g) {
    counts[g - 1] = i - cut[g][i];
    i = cut[g][i];
  }
  return counts;
}

double bottleneck_of(const std::vector<double>& layer_times, const std::vector<int32_t>& counts) {
  double worst = 0.0;
  size_t layer = 0;
  for (int32_t count : counts) {
    double total = 0.0;
    for (int32_t k = 0; k < count; ++k) total += layer_times[layer++];
    worst = std::max(worst, total);
  }
  return worst;
}

}  // namespace pipetwin
