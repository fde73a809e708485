#include "analysis/metrics.h"

#include <algorithm>
#include <limits>
#include <map>

namespace pipetwin {

RunMetrics compute_metrics(const Timeline& timeline, int32_t iterations,
                           int64_t samples_per_iteration) {
  RunMetrics run;
  std::map<int32_t, size_t> index;  // device id -> position in run.devices
  for (const TimelineDevice& device : timeline.devices) {
    index[device.id] = run.devices.size();
    run.devices.push_back({device.id, device.name, 0, 0, 0});
  }
  double first = std::numeric_limits<double>::infinity();
  double last = -std::numeric_limits<double>::infinity();
  for (const Span& span : timeline.spans) {
    first = std::min(first, span.start_s);
    last = std::max(last, span.end_s);
    if (span.lane == "compute" && index.count(span.device)) {
      run.devices[index[span.device]].busy_s += span.duration_s();
    }
  }
  for (const Counter& counter : timeline.counters) {
    if (counter.name != "memory_bytes" || !index.count(counter.device)) continue;
    auto& peak = run.devices[index[counter.device]].peak_memory_bytes;
    peak = std::max(peak, counter.value);
  }
  if (timeline.spans.empty()) return run;

  run.makespan_s = last - first;
  run.iteration_time_s = run.makespan_s / iterations;
  run.throughput_samples_per_s =
      run.makespan_s > 0 ? static_cast<double>(samples_per_iteration) * iterations / run.makespan_s
                         : 0;
  double busy = 0;
  for (DeviceMetrics& device : run.devices) {
    device.bubble_ratio = run.makespan_s > 0 ? 1.0 - device.busy_s / run.makespan_s : 0;
    busy += device.busy_s;
  }
  if (run.makespan_s > 0 && !run.devices.empty()) {
    run.bubble_ratio = 1.0 - busy / (run.makespan_s * run.devices.size());
  }
  return run;
}

}  // namespace pipetwin
