// The counters of a run as charts: memory over time per device, with its capacity and the
// peak marked, and the utilisation of the busiest links.
#pragma once

#include <string>
#include <vector>

#include "traces/timeline.h"

namespace pipetwin {

struct MemoryChartInput {
  std::vector<double> capacity_bytes;  // per device of the timeline, in its order; 0: unknown
  std::vector<std::string> peak_ops;   // per device: the op at its peak; empty: unknown
  size_t max_devices = 8;              // the devices with the highest peaks, beyond that
};

// The chart and a table of the peaks; empty when the timeline has no memory counter. Each device's
// peak is a <circle class="peak" data-key="DEVICE ID" data-value="BYTES"> at the first sample that
// reaches the largest value of its "memory_bytes" counter.
std::string render_memory_chart(const Timeline& timeline, const MemoryChartInput& input);

// The `busiest` links by the time their utilisation counter was above 0; empty when the
// timeline has no link counter.
std::string render_link_chart(const Timeline& timeline, size_t busiest = 3);

}  // namespace pipetwin
