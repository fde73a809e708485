#include "report/breakdown_chart.h"

#include <array>
#include <cstdio>

#include "report/html_page.h"
#include "report/svg.h"
#include "report/text_units.h"

namespace pipetwin {
namespace {

constexpr std::array<const char*, 5> kParts = {"compute", "overlapped communication",
                                               "exposed communication", "idle, waiting on a peer",
                                               "idle, warm-up or drain"};

std::array<double, 5> parts_of(const DeviceTimeBreakdown& d) {
  return {d.compute_s, d.overlapped_comm_s, d.exposed_comm_s, d.idle_peer_s, d.idle_warmup_drain_s};
}

std::string percent(double part, double total) {
  return format_number("%.1f%%", total > 0 ? 100 * part / total : 0);
}

}  // namespace

std::string render_breakdown(const std::vector<DeviceTimeBreakdown>& devices) {
  constexpr double kLabel = 96, kPlot = 900, kRow = 22, kTop = 8;
  const double legend_y = kTop + kRow * static_cast<double>(devices.size()) + 14;
  SvgWriter svg(kLabel + kPlot + 10, legend_y + 10, "chart breakdown");
  for (size_t k = 0; k < devices.size(); ++k) {
    const DeviceTimeBreakdown& d = devices[k];
    const double y = kTop + kRow * static_cast<double>(k);
    svg.open("g", {{"class", "device-breakdown"}, {"data-device", std::to_string(d.device)}});
    svg.text(kLabel - 8, y + 13, d.name, "tick end");
    const std::array<double, 5> parts = parts_of(d);
    const double total = d.total_s();
    double x = kLabel;
    for (size_t p = 0; p < parts.size(); ++p) {
      if (parts[p] <= 0 || total <= 0) continue;
      const double w = parts[p] / total * kPlot;
      char fraction[32];
      std::snprintf(fraction, sizeof fraction, "%.17g", parts[p] / total);
      svg.element("rect", {{"x", svg_number(x)},
                           {"y", svg_number(y)},
                           {"width", svg_number(w)},
                           {"height", svg_number(kRow - 6)},
                           {"class", "bk" + std::to_string(p)},
                           {"data-part", kParts[p]},
                           {"data-fraction", fraction},
                           {"data-tip", d.name + " " + kParts[p] + ": " + format_seconds(parts[p]) +
                                            " (" + percent(parts[p], total) + ")"}});
      x += w;
    }
    svg.close("g");
  }
  for (size_t p = 0; p < kParts.size(); ++p) {
    const double x = kLabel + static_cast<double>(p) * 180;
    svg.rect(x, legend_y - 9, 10, 10, "bk" + std::to_string(p));
    svg.text(x + 14, legend_y, kParts[p], "legend");
  }
  std::vector<std::vector<std::string>> rows;
  for (const DeviceTimeBreakdown& d : devices) {
    std::vector<std::string> row = {d.name};
    for (double part : parts_of(d)) {
      row.push_back(format_seconds(part) + " (" + percent(part, d.total_s()) + ")");
    }
    rows.push_back(std::move(row));
  }
  std::vector<std::string> header = {"device"};
  header.insert(header.end(), kParts.begin(), kParts.end());
  return svg.finish() + table_html(header, rows);
}

}  // namespace pipetwin
