#include "analysis/noise_control.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>

namespace pipetwin {
namespace {

// A counter series: (link or -1, device or -1, name).
using SeriesKey = std::tuple<int32_t, int32_t, std::string>;

SeriesKey series_of(const Counter& c) {
  return c.link >= 0 ? SeriesKey{c.link, -1, c.name} : SeriesKey{-1, c.device, c.name};
}

// Linear interpolation between order statistics of `sorted` (not empty), p in [0, 1].
double percentile(const std::vector<double>& sorted, double p) {
  const double position = p * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(position);
  if (below + 1 >= sorted.size()) return sorted.back();
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[below + 1] - sorted[below]);
}

}  // namespace

void drop_warmup_iterations(Timeline& timeline, int32_t n) {
  if (n <= 0) return;
  double cut = std::numeric_limits<double>::infinity();
  for (const Span& s : timeline.spans) {
    if (s.iteration >= n) cut = std::min(cut, s.start_s);
  }
  std::vector<Span> spans;
  for (Span& s : timeline.spans) {
    if (s.iteration < n) continue;
    s.iteration -= n;
    s.start_s -= cut;
    s.end_s -= cut;
    spans.push_back(std::move(s));
  }
  timeline.spans = std::move(spans);
  if (timeline.spans.empty()) {
    timeline.counters.clear();
    timeline.instants.clear();
    return;
  }

  // Per series, the sample holding at the cut: the latest at or before it (the later of
  // two at the same time, as a reader taking samples in order would).
  std::map<SeriesKey, size_t> held;
  for (size_t k = 0; k < timeline.counters.size(); ++k) {
    const Counter& c = timeline.counters[k];
    if (c.time_s > cut) continue;
    const auto [it, inserted] = held.emplace(series_of(c), k);
    if (!inserted && timeline.counters[it->second].time_s <= c.time_s) it->second = k;
  }
  std::vector<Counter> counters;
  for (size_t k = 0; k < timeline.counters.size(); ++k) {
    Counter c = timeline.counters[k];
    if (c.time_s > cut) {
      c.time_s -= cut;
    } else if (held.at(series_of(c)) == k) {
      c.time_s = 0;
    } else {
      continue;
    }
    counters.push_back(std::move(c));
  }
  timeline.counters = std::move(counters);

  std::vector<Instant> instants;
  for (Instant i : timeline.instants) {
    if (i.time_s < cut) continue;
    i.time_s -= cut;
    instants.push_back(std::move(i));
  }
  timeline.instants = std::move(instants);
}

RepeatSummary summarize_repeats(const std::vector<double>& makespans_s) {
  if (makespans_s.empty()) throw std::invalid_argument("summarize_repeats: no runs");
  RepeatSummary summary;
  summary.makespans_s = makespans_s;
  std::vector<size_t> order(makespans_s.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return makespans_s[a] < makespans_s[b]; });
  summary.median_run = order[(order.size() - 1) / 2];
  std::vector<double> sorted = makespans_s;
  std::sort(sorted.begin(), sorted.end());
  summary.median_s = makespans_s[summary.median_run];
  summary.min_s = sorted.front();
  summary.max_s = sorted.back();
  summary.p25_s = percentile(sorted, 0.25);
  summary.p75_s = percentile(sorted, 0.75);
  return summary;
}

}  // namespace pipetwin
