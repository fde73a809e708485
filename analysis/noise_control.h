// Noise control for measured runs (`pipetwin run --warmup N --repeat R`): leaving the
// warm-up iterations out of a timeline, and choosing among repeated runs by makespan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "traces/timeline.h"

namespace pipetwin {

// Leaves out every span of iterations 0..n-1 and makes the rest look like a run of its
// own, as a simulation of the remaining iterations would record it: iterations renumbered
// from 0, all times shifted so that the first kept span starts at 0. Each counter series
// (one device's or link's counter of one name) starts at 0 with the value it held when
// the first kept span started, followed by its later samples, shifted alike; instants
// before that moment are dropped, the later ones shifted. n <= 0 changes nothing; when no
// span is left, neither is any counter or instant.
void drop_warmup_iterations(Timeline& timeline, int32_t n);

// Repeated runs, by makespan. Percentiles interpolate linearly between order statistics
// (numpy's default); the median run is a run, not an interpolation: the middle one of
// the sorted makespans, the lower of the two middle ones for an even count.
struct RepeatSummary {
  std::vector<double> makespans_s;  // in run order
  size_t median_run = 0;            // index into makespans_s
  double median_s = 0;              // makespans_s[median_run]
  double min_s = 0;
  double max_s = 0;
  double p25_s = 0;
  double p75_s = 0;

  // (max - min) / median; 0 when the median is 0.
  double spread() const { return median_s > 0 ? (max_s - min_s) / median_s : 0; }
};

// Throws std::invalid_argument for no makespans.
RepeatSummary summarize_repeats(const std::vector<double>& makespans_s);

}  // namespace pipetwin
