#include "report/run_charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include "analysis/metrics.h"
#include "report/chart.h"
#include "report/html_page.h"
#include "report/svg.h"
#include "report/text_units.h"

namespace pipetwin {
namespace {

constexpr int kColumns = 600;

// Samples of each counter, in time order, relative to the window's origin.
using Samples = std::vector<std::pair<double, double>>;

std::string exact(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

}  // namespace

std::string render_memory_chart(const Timeline& timeline, const MemoryChartInput& input) {
  const SpanExtent extent = span_extent(timeline);
  const double origin = extent.first_s, end = extent.last_s;
  std::map<int32_t, Samples> memory;
  for (const Counter& c : timeline.counters) {
    if (!std::isfinite(c.time_s) || !std::isfinite(c.value)) continue;
    if (c.link < 0 && c.name == "memory_bytes")
      memory[c.device].emplace_back(c.time_s - origin, c.value);
  }
  if (memory.empty()) return "";
  struct Device {
    size_t index;
    const TimelineDevice* device;
    Samples* samples;
    double peak;
  };
  std::vector<Device> shown;
  for (size_t k = 0; k < timeline.devices.size(); ++k) {
    auto found = memory.find(timeline.devices[k].id);
    if (found == memory.end()) continue;
    Samples& samples = found->second;
    std::stable_sort(samples.begin(), samples.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    double peak = -std::numeric_limits<double>::infinity();
    for (const auto& sample : samples) peak = std::max(peak, sample.second);
    shown.push_back({k, &timeline.devices[k], &samples, peak});
  }
  const size_t total = shown.size();
  if (shown.size() > input.max_devices) {
    std::stable_sort(shown.begin(), shown.end(),
                     [](const Device& a, const Device& b) { return a.peak > b.peak; });
    shown.resize(input.max_devices);
    std::sort(shown.begin(), shown.end(),
              [](const Device& a, const Device& b) { return a.index < b.index; });
  }
  LineChart chart;
  chart.title = "Memory per device" + (shown.size() < total
                                           ? " (the " + std::to_string(shown.size()) + " of " +
                                                 std::to_string(total) + " with the highest peaks)"
                                           : std::string());
  chart.css_class = "chart memory";
  chart.x_label = "time";
  chart.x_unit = Unit::kSeconds;
  chart.y_label = "allocated";
  chart.y_unit = Unit::kBytes;
  std::set<double> capacities;
  std::vector<std::vector<std::string>> peaks;
  for (const Device& d : shown) {
    const Samples& samples = *d.samples;
    Samples points = samples;
    if (!points.empty() && end - origin > points.back().first) {
      points.emplace_back(end - origin, points.back().second);
    }
    chart.series.push_back(
        {d.device->name, downsample_max(points, 0, end - origin, kColumns), true});
    const auto at_peak = std::find_if(samples.begin(), samples.end(),
                                      [&](const auto& s) { return s.second == d.peak; });
    std::string label = d.device->name + " peak " + format_gib(d.peak) + " GiB";
    std::string op = "-";
    if (d.index < input.peak_ops.size() && !input.peak_ops[d.index].empty()) {
      op = input.peak_ops[d.index];
      label += " at " + op;
    }
    const bool capacity_known =
        d.index < input.capacity_bytes.size() && input.capacity_bytes[d.index] > 0;
    peaks.push_back({d.device->name, format_gib(d.peak), op, format_seconds(at_peak->first),
                     capacity_known ? format_gib(input.capacity_bytes[d.index]) : "-"});
    chart.markers.push_back(
        {at_peak->first, d.peak, label, "peak", exact(d.peak), std::to_string(d.device->id)});
    if (d.index < input.capacity_bytes.size() && input.capacity_bytes[d.index] > 0) {
      capacities.insert(input.capacity_bytes[d.index]);
    }
  }
  for (double capacity : capacities) {
    chart.hlines.emplace_back(capacity, "capacity " + format_gib(capacity) + " GiB");
  }
  return render_line_chart(chart) +
         table_html({"device", "peak (GiB)", "at", "time", "capacity (GiB)"}, peaks);
}

std::string render_link_chart(const Timeline& timeline, size_t busiest) {
  const SpanExtent extent = span_extent(timeline);
  const double origin = extent.first_s, end = extent.last_s;
  std::map<int32_t, Samples> utilization;
  for (const Counter& c : timeline.counters) {
    if (c.link >= 0 && std::isfinite(c.time_s) && std::isfinite(c.value)) {
      utilization[c.link].emplace_back(c.time_s - origin, c.value);
    }
  }
  if (utilization.empty()) return "";
  std::map<int32_t, std::string> names;
  for (const TimelineLink& link : timeline.links) names[link.id] = link.name;
  std::vector<std::pair<double, int32_t>> busy;  // (time above 0, link)
  for (auto& [link, samples] : utilization) {
    std::stable_sort(samples.begin(), samples.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    double time = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
      const double next = i + 1 < samples.size() ? samples[i + 1].first : end - origin;
      if (samples[i].second > 0) time += std::max(0.0, next - samples[i].first);
    }
    busy.emplace_back(time, link);
  }
  std::stable_sort(busy.begin(), busy.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (busy.size() > busiest) busy.resize(busiest);
  LineChart chart;
  chart.title = "Utilisation of the " + std::to_string(busy.size()) + " busiest links";
  chart.css_class = "chart links";
  chart.x_label = "time (the peak within each pixel column)";
  chart.x_unit = Unit::kSeconds;
  chart.y_label = "utilisation";
  chart.y_unit = Unit::kRatio;
  for (const auto& [time, link] : busy) {
    const std::string name = names.count(link) ? names[link] : "link" + std::to_string(link);
    Samples points = utilization[link];
    if (!points.empty() && end - origin > points.back().first) {
      points.emplace_back(end - origin, points.back().second);
    }
    chart.series.push_back({name + " (busy " + format_seconds(time) + ")",
                            downsample_max(points, 0, end - origin, kColumns), true});
  }
  return render_line_chart(chart);
}

}  // namespace pipetwin
