#include "sim/freeze/auto_freeze.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pipetwin {

double percentile_of(std::vector<double> values, double p) {
  if (values.empty()) throw std::invalid_argument("percentile of no values");
  std::sort(values.begin(), values.end());
  const double rank = p / 100 * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (rank - static_cast<double>(below)) * (values[above] - values[below]);
}

int32_t apply_auto_freeze(const std::vector<double>& previous, const std::vector<double>& current,
                          int32_t frozen, const FreezeRule& rule) {
  const int32_t layers = static_cast<int32_t>(current.size());
  if (frozen >= layers) return layers;
  // A layer whose norm was 0 has nothing left to learn from: it counts as unchanged.
  std::vector<double> change;
  for (int32_t l = frozen; l < layers; ++l) {
    change.push_back(previous[l] > 0 ? std::abs(previous[l] - current[l]) / previous[l] : 0);
  }
  const double threshold = percentile_of(change, rule.percentile);
  int32_t first_changing = frozen;
  while (first_changing < layers && change[first_changing - frozen] < threshold) ++first_changing;
  const int32_t step =
      std::max<int32_t>(1, static_cast<int32_t>(std::floor(rule.max_fraction_per_step * layers)));
  return std::min(first_changing, frozen + step);
}

}  // namespace pipetwin
