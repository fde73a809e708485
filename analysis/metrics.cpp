#include "analysis/metrics.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "analysis/intervals.h"

namespace pipetwin {
namespace {

// Spans of one device, by lane: compute, point-to-point transfers, collectives.
struct DeviceSpans {
  Intervals compute, comm, collective;
};

void add_communication(const std::vector<DeviceSpans>& spans, RunMetrics& run) {
  for (size_t k = 0; k < run.devices.size(); ++k) {
    DeviceMetrics& device = run.devices[k];
    const Intervals compute = merged(spans[k].compute);
    const Intervals comm = merged(spans[k].comm);
    device.comm_s = total_length(comm);
    device.exposed_comm_s = uncovered_length(comm, compute);
    if (device.comm_s > 0) device.overlap_ratio = 1.0 - device.exposed_comm_s / device.comm_s;
    const Intervals collective = merged(spans[k].collective);
    device.collective_s = total_length(collective);
    device.exposed_collective_s = uncovered_length(collective, compute);
    run.comm_s += device.comm_s;
    run.exposed_comm_s += device.exposed_comm_s;
    run.collective_s += device.collective_s;
    run.exposed_collective_s += device.exposed_collective_s;
  }
}

}  // namespace

// The per-iteration and relative figures, from the totals.
void derive_rates(RunMetrics& run, double iterations, int64_t samples_per_iteration) {
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
}

SpanExtent span_extent(const Timeline& timeline) {
  if (timeline.spans.empty()) return {};
  SpanExtent extent{std::numeric_limits<double>::infinity(),
                    -std::numeric_limits<double>::infinity()};
  for (const Span& span : timeline.spans) {
    extent.first_s = std::min(extent.first_s, span.start_s);
    extent.last_s = std::max(extent.last_s, span.end_s);
  }
  return extent;
}

RunMetrics compute_metrics(const Timeline& timeline, int32_t iterations,
                           int64_t samples_per_iteration) {
  RunMetrics run;
  std::map<int32_t, size_t> index;  // device id -> position in run.devices
  for (const TimelineDevice& device : timeline.devices) {
    index[device.id] = run.devices.size();
    DeviceMetrics metrics;
    metrics.id = device.id;
    metrics.name = device.name;
    run.devices.push_back(std::move(metrics));
  }
  std::vector<DeviceSpans> device_spans(run.devices.size());
  for (const Span& span : timeline.spans) {
    const auto found = index.find(span.device);
    if (found == index.end()) continue;
    if (span.lane == "compute") {
      run.devices[found->second].busy_s += span.duration_s();
      device_spans[found->second].compute.emplace_back(span.start_s, span.end_s);
    } else if (span.lane == "send" || span.lane == "recv") {
      device_spans[found->second].comm.emplace_back(span.start_s, span.end_s);
    } else if (span.lane == "collective" || span.lane == "data-parallel") {
      device_spans[found->second].collective.emplace_back(span.start_s, span.end_s);
    }
  }
  add_communication(device_spans, run);
  for (const Counter& counter : timeline.counters) {
    if (counter.name != "memory_bytes" || !index.count(counter.device)) continue;
    auto& peak = run.devices[index[counter.device]].peak_memory_bytes;
    peak = std::max(peak, counter.value);
  }
  if (timeline.spans.empty()) return run;

  const SpanExtent extent = span_extent(timeline);
  run.makespan_s = extent.last_s - extent.first_s;
  derive_rates(run, iterations, samples_per_iteration);
  return run;
}

RunMetrics extrapolate_metrics(const RunMetrics& shorter, const RunMetrics& longer,
                               int32_t longer_iterations, int64_t iterations,
                               int64_t samples_per_iteration) {
  const double extra = static_cast<double>(iterations - longer_iterations);
  auto grow = [&](double a, double b) { return b + extra * (b - a); };
  RunMetrics run = longer;
  run.makespan_s = grow(shorter.makespan_s, longer.makespan_s);
  run.comm_s = grow(shorter.comm_s, longer.comm_s);
  run.exposed_comm_s = grow(shorter.exposed_comm_s, longer.exposed_comm_s);
  run.collective_s = grow(shorter.collective_s, longer.collective_s);
  run.exposed_collective_s = grow(shorter.exposed_collective_s, longer.exposed_collective_s);
  for (size_t d = 0; d < run.devices.size() && d < shorter.devices.size(); ++d) {
    DeviceMetrics& device = run.devices[d];
    const DeviceMetrics& before = shorter.devices[d];
    device.busy_s = grow(before.busy_s, device.busy_s);
    device.comm_s = grow(before.comm_s, device.comm_s);
    device.exposed_comm_s = grow(before.exposed_comm_s, device.exposed_comm_s);
    device.collective_s = grow(before.collective_s, device.collective_s);
    device.exposed_collective_s = grow(before.exposed_collective_s, device.exposed_collective_s);
    if (device.comm_s > 0) device.overlap_ratio = 1.0 - device.exposed_comm_s / device.comm_s;
  }
  derive_rates(run, static_cast<double>(iterations), samples_per_iteration);
  return run;
}

}  // namespace pipetwin
