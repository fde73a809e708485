#include "analysis/intervals.h"

#include <algorithm>

namespace pipetwin {

Intervals merged(Intervals intervals) {
  std::sort(intervals.begin(), intervals.end());
  Intervals out;
  for (const auto& [lo, hi] : intervals) {
    if (hi <= lo) continue;
    if (!out.empty() && lo <= out.back().second) {
      out.back().second = std::max(out.back().second, hi);
    } else {
      out.emplace_back(lo, hi);
    }
  }
  return out;
}

double total_length(const Intervals& disjoint) {
  double sum = 0;
  for (const auto& [lo, hi] : disjoint) sum += hi - lo;
  return sum;
}

Intervals uncovered(const Intervals& a, const Intervals& b) {
  Intervals out;
  size_t k = 0;
  for (const auto& [lo, hi] : a) {
    while (k < b.size() && b[k].second <= lo) ++k;
    double from = lo;
    for (size_t j = k; j < b.size() && b[j].first < hi; ++j) {
      if (b[j].first > from) out.emplace_back(from, b[j].first);
      from = std::max(from, b[j].second);
    }
    if (from < hi) out.emplace_back(from, hi);
  }
  return out;
}

double uncovered_length(const Intervals& a, const Intervals& b) {
  return total_length(uncovered(a, b));
}

}  // namespace pipetwin
