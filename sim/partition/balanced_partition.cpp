#include "sim/partition/balanced_partition.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace pipetwin {

std::vector<int32_t> balanced_partition(const std::vector<double>& layer_times, int32_t parts,
                                        std::span<const double> part_speeds) {
  const int32_t n = static_cast<int32_t>(layer_times.size());
  if (parts < 1 || parts > n) {
    throw std::invalid_argument("balanced_partition: need 1 <= parts <= layers");
  }
  if (!part_speeds.empty() && part_speeds.size() != static_cast<size_t>(parts)) {
    throw std::invalid_argument("balanced_partition: need one speed per part");
  }
  std::vector<double> prefix(n + 1, 0.0);
  for (int32_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + layer_times[i];
  // Group g's time: its layers' over its device's speed (x / 1 is x, bit for bit).
  double speed = 1;
  auto sum = [&](int32_t from, int32_t to) { return (prefix[to] - prefix[from]) / speed; };

  const double inf = std::numeric_limits<double>::infinity();
  // best[g][i]: smallest bottleneck placing the first i layers into g groups; cut[g][i]: the
  // first j (layers before the last group) that reaches it.
  //   best[g][i] = min over j of max(best[g-1][j], sum(j, i) / speed of group g)
  // best[g-1][j] never falls as j grows (times are >= 0, and rounding is monotone) while
  // sum(j, i) never rises, so the max falls until the two cross and rises after: binary
  // searches find the crossing and the first j of the minimum, in O(parts n log n) instead
  // of O(parts n^2) (20,000 layers took seconds). The choice, ties included, is the one a
  // scan over every j makes (tests/sim/partition/balanced_partition_test.cpp).
  std::vector<std::vector<double>> best(parts + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int32_t>> cut(parts + 1, std::vector<int32_t>(n + 1, -1));
  best[0][0] = 0.0;
  for (int32_t g = 1; g <= parts; ++g) {
    const std::vector<double>& before = best[g - 1];
    speed = part_speeds.empty() ? 1.0 : part_speeds[g - 1];
    // Leave at least one layer for each of the remaining groups.
    for (int32_t i = g; i <= n - (parts - g); ++i) {
      // The crossing: the first j in [g - 1, i) with before[j] >= sum(j, i), or i.
      int32_t lo = g - 1, hi = i;
      while (lo < hi) {
        const int32_t mid = lo + (hi - lo) / 2;
        if (before[mid] >= sum(mid, i)) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      const int32_t crossing = lo;
      double value = inf;
      int32_t chosen = -1;
      if (crossing > g - 1) {
        // Left of the crossing the max is sum(j, i), smallest at crossing - 1; its first j:
        value = sum(crossing - 1, i);
        int32_t first = g - 1, last = crossing - 1;
        while (first < last) {
          const int32_t mid = first + (last - first) / 2;
          if (sum(mid, i) <= value) {
            last = mid;
          } else {
            first = mid + 1;
          }
        }
        chosen = first;
      }
      if (crossing < i && before[crossing] < value) {
        value = before[crossing];
        chosen = crossing;
      }
      if (value < inf) {
        best[g][i] = value;
        cut[g][i] = chosen;
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
