#include "analysis/time_breakdown.h"

#include <algorithm>
#include <limits>
#include <map>

#include "analysis/intervals.h"
#include "analysis/metrics.h"

namespace pipetwin {
namespace {

struct DeviceLanes {
  Intervals compute, comm;
  std::map<int32_t, std::pair<double, double>> iteration_window;  // first start, last end
};

double covered_by(const Intervals& a, const Intervals& b) {
  return total_length(a) - uncovered_length(a, b);
}

}  // namespace

std::vector<DeviceTimeBreakdown> time_breakdown(const Timeline& timeline) {
  std::map<int32_t, size_t> index;
  std::vector<DeviceTimeBreakdown> out;
  for (const TimelineDevice& device : timeline.devices) {
    index[device.id] = out.size();
    DeviceTimeBreakdown& d = out.emplace_back();
    d.device = device.id;
    d.name = device.name;
  }
  if (timeline.spans.empty()) return out;
  std::vector<DeviceLanes> lanes(out.size());
  for (const Span& span : timeline.spans) {
    const auto found = index.find(span.device);
    if (found == index.end()) continue;
    DeviceLanes& lane = lanes[found->second];
    if (span.lane == "compute") {
      lane.compute.emplace_back(span.start_s, span.end_s);
      auto [it, fresh] =
          lane.iteration_window.try_emplace(span.iteration, span.start_s, span.end_s);
      if (!fresh) {
        it->second.first = std::min(it->second.first, span.start_s);
        it->second.second = std::max(it->second.second, span.end_s);
      }
    } else {
      lane.comm.emplace_back(span.start_s, span.end_s);
    }
  }
  const SpanExtent extent = span_extent(timeline);
  const Intervals whole = {{extent.first_s, extent.last_s}};
  for (size_t k = 0; k < out.size(); ++k) {
    DeviceLanes& lane = lanes[k];
    const Intervals compute = merged(std::move(lane.compute));
    const Intervals comm = merged(std::move(lane.comm));
    Intervals busy = compute;
    busy.insert(busy.end(), comm.begin(), comm.end());
    busy = merged(std::move(busy));
    Intervals windows;
    for (const auto& [iteration, window] : lane.iteration_window) windows.push_back(window);
    const Intervals idle = uncovered(whole, busy);

    DeviceTimeBreakdown& d = out[k];
    d.overlapped_comm_s = covered_by(comm, compute);
    d.compute_s = total_length(compute) - d.overlapped_comm_s;
    d.exposed_comm_s = uncovered_length(comm, compute);
    d.idle_peer_s = covered_by(idle, merged(std::move(windows)));
    d.idle_warmup_drain_s = total_length(idle) - d.idle_peer_s;
  }
  return out;
}

}  // namespace pipetwin
