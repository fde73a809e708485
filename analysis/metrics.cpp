#include "analysis/metrics.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "analysis/intervals.h"
#include "sim/exec/make_timeline.h"  // kMemoryCounter

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

namespace {

// What the metrics count of a span, by its lane.
enum class SpanKind { kCompute, kTransfer, kCollective, kOther };

// The metrics of spans given one by one, `for_each_span(add)` calling add(device id, kind,
// start, end) for each, and of each device's memory samples, `for_each_memory(add)` calling
// add(device id, bytes): the one computation for a timeline and for a simulated Program.
template <class ForEachSpan, class ForEachMemory>
RunMetrics metrics_of(const std::vector<TimelineDevice>& devices, ForEachSpan&& for_each_span,
                      ForEachMemory&& for_each_memory, int32_t iterations,
                      int64_t samples_per_iteration) {
  RunMetrics run;
  std::map<int32_t, size_t> index;  // device id -> position in run.devices
  for (const TimelineDevice& device : devices) {
    index[device.id] = run.devices.size();
    DeviceMetrics metrics;
    metrics.id = device.id;
    metrics.name = device.name;
    run.devices.push_back(std::move(metrics));
  }
  std::vector<DeviceSpans> device_spans(run.devices.size());
  SpanExtent extent{std::numeric_limits<double>::infinity(),
                    -std::numeric_limits<double>::infinity()};
  bool any = false;
  for_each_span([&](int32_t device, SpanKind kind, double start_s, double end_s) {
    any = true;
    extent.first_s = std::min(extent.first_s, start_s);
    extent.last_s = std::max(extent.last_s, end_s);
    const auto found = index.find(device);
    if (found == index.end()) return;
    DeviceSpans& spans = device_spans[found->second];
    switch (kind) {
      case SpanKind::kCompute:
        run.devices[found->second].busy_s += end_s - start_s;
        spans.compute.emplace_back(start_s, end_s);
        break;
      case SpanKind::kTransfer:
        spans.comm.emplace_back(start_s, end_s);
        break;
      case SpanKind::kCollective:
        spans.collective.emplace_back(start_s, end_s);
        break;
      case SpanKind::kOther:
        break;
    }
  });
  add_communication(device_spans, run);
  for_each_memory([&](int32_t device, double bytes) {
    const auto found = index.find(device);
    if (found == index.end()) return;
    auto& peak = run.devices[found->second].peak_memory_bytes;
    peak = std::max(peak, bytes);
  });
  if (!any) return run;
  run.makespan_s = extent.last_s - extent.first_s;
  derive_rates(run, iterations, samples_per_iteration);
  return run;
}

SpanKind kind_of_lane(const std::string& lane) {
  if (lane == "compute") return SpanKind::kCompute;
  if (lane == "send" || lane == "recv") return SpanKind::kTransfer;
  if (lane == "collective" || lane == "data-parallel") return SpanKind::kCollective;
  return SpanKind::kOther;
}

SpanKind kind_of_lane(Lane lane) {
  switch (lane) {
    case Lane::kCompute:
      return SpanKind::kCompute;
    case Lane::kSend:
    case Lane::kRecv:
      return SpanKind::kTransfer;
    case Lane::kCollective:
    case Lane::kDataParallel:
      return SpanKind::kCollective;
    case Lane::kCopy:
      break;
  }
  return SpanKind::kOther;
}

}  // namespace

RunMetrics compute_metrics(const Timeline& timeline, int32_t iterations,
                           int64_t samples_per_iteration) {
  return metrics_of(
      timeline.devices,
      [&](auto&& add) {
        for (const Span& span : timeline.spans) {
          add(span.device, kind_of_lane(span.lane), span.start_s, span.end_s);
        }
      },
      [&](auto&& add) {
        for (const Counter& counter : timeline.counters) {
          if (counter.name == kMemoryCounter) add(counter.device, counter.value);
        }
      },
      iterations, samples_per_iteration);
}

RunMetrics compute_metrics(const SimulationResult& result, int32_t iterations,
                           int64_t samples_per_iteration) {
  const Program& program = result.program;
  return metrics_of(
      result.timeline.devices,
      [&](auto&& add) {
        for (int32_t i = 0; i < program.size(); ++i) {
          const Instruction& instr = program.instructions[i];
          add(instr.device, kind_of_lane(instr.lane()), result.times.start_s[i],
              result.times.end_s[i]);
        }
      },
      [&](auto&& add) {
        for (size_t d = 0; d < result.memory.samples.size(); ++d) {
          for (const auto& [time, bytes] : result.memory.samples[d]) {
            add(static_cast<int32_t>(d), static_cast<double>(bytes));
          }
        }
      },
      iterations, samples_per_iteration);
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
