#include "report/chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "report/svg.h"
#include "report/text_units.h"

namespace pipetwin {
namespace {

constexpr double kLeft = 78, kRight = 16, kTop = 38, kBottom = 40, kLegendRow = 16;

// The binary unit bytes are labelled in: 1, KiB, MiB, GiB, TiB.
double byte_scale(double bytes) {
  double scale = 1;
  while (scale < 0x1p40 && std::abs(bytes) >= 1024 * scale) scale *= 1024;
  return scale;
}

}  // namespace

std::vector<double> axis_ticks(double lo, double hi, Unit unit) {
  if (unit == Unit::kBytes) {
    const double scale = byte_scale(std::max(std::abs(lo), std::abs(hi)));
    std::vector<double> out = axis_ticks(lo / scale, hi / scale, Unit::kNumber);
    for (double& t : out) t *= scale;
    return out;
  }
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / 5;
  const double power = std::pow(10, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * power;
    if (step >= raw) break;
  }
  std::vector<double> out;
  const double first = std::ceil(lo / step) * step;
  // Counted, not accumulated: a step below the values' precision must not loop forever.
  for (int i = 0; i <= 20; ++i) {
    const double t = first + i * step;
    if (t > hi + step * 1e-9) break;
    out.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  }
  if (out.empty()) out.push_back(lo);
  return out;
}

std::string format_tick(double value, Unit unit) {
  if (value == 0) return "0";
  switch (unit) {
    case Unit::kSeconds: {
      const double a = std::abs(value);
      if (a >= 1) return format_number("%g s", value);
      if (a >= 1e-3) return format_number("%g ms", value * 1e3);
      return format_number("%g us", value * 1e6);
    }
    case Unit::kBytes: {
      static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
      const double scale = byte_scale(value);
      return format_number("%g ", value / scale) + kUnits[static_cast<int>(std::log2(scale) / 10)];
    }
    case Unit::kRatio:
      return format_number("%g%%", 100 * value);
    case Unit::kNumber:
      break;
  }
  return format_number("%g", value);
}

namespace {

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  // From 0 (a y axis of amounts), with a margin around the values (a y axis that need not
  // start at 0), or tight (an x axis).
  enum class Fit { kFromZero, kMargin, kTight };
  void settle(Fit fit) {
    if (lo > hi) lo = hi = 0;
    if (fit == Fit::kFromZero) lo = std::min(lo, 0.0);
    if (fit == Fit::kMargin) {
      const double pad = hi > lo ? (hi - lo) * 0.05 : std::abs(lo) * 0.05;
      lo -= pad;
      hi += pad;
    }
    if (hi == lo) hi = lo + (lo == 0 ? 1 : std::abs(lo) * 0.1);
  }
};

std::string series_class(size_t k) {
  std::string name = "s";
  name += std::to_string(k % 8);
  return name;
}

}  // namespace

std::string format_value(double value, Unit unit) {
  switch (unit) {
    case Unit::kSeconds:
      return value == 0 ? "0" : format_seconds(value);
    case Unit::kBytes:
      return format_bytes(value);
    case Unit::kRatio:
      return format_number("%.1f%%", 100 * value);
    case Unit::kNumber:
      break;
  }
  return format_number("%g", value);
}

std::string render_line_chart(const LineChart& chart) {
  const bool categorical = !chart.x_categories.empty();
  Range x, y;
  for (const LineSeries& s : chart.series) {
    for (const auto& [px, py] : s.points) {
      x.add(px);
      y.add(py);
    }
  }
  for (const auto& [value, label] : chart.hlines) y.add(value);
  for (const auto& [value, label] : chart.vlines) x.add(value);
  if (categorical) {
    x.lo = -0.5;
    x.hi = static_cast<double>(chart.x_categories.size()) - 0.5;
  }
  x.settle(Range::Fit::kTight);
  y.settle(chart.y_from_zero ? Range::Fit::kFromZero : Range::Fit::kMargin);
  // Legend entries in columns wide enough for the longest name.
  size_t longest = 1;
  for (const LineSeries& s : chart.series) longest = std::max(longest, s.name.size());
  const double plot_w = chart.width - kLeft - kRight;
  const size_t per_row = std::clamp<size_t>(
      static_cast<size_t>(plot_w / (6.2 * static_cast<double>(longest) + 24)), 1, 4);
  const double legend =
      kLegendRow * static_cast<double>((chart.series.size() + per_row - 1) / per_row);
  const double height = chart.height + legend + 12;
  const double plot_h = chart.height - kTop - kBottom;
  const auto sx = [&](double v) { return kLeft + (v - x.lo) / (x.hi - x.lo) * plot_w; };
  const auto sy = [&](double v) { return kTop + plot_h - (v - y.lo) / (y.hi - y.lo) * plot_h; };

  SvgWriter svg(chart.width, height, chart.css_class);
  // data-* attributes go on a first group: SvgWriter's root takes a fixed list.
  svg.raw("<g");
  for (const auto& [name, value] : chart.data) {
    svg.raw(" data-" + name + "=\"" + escape_xml(value) + "\"");
  }
  svg.raw(">");
  svg.text(kLeft, 14, chart.title, "title");
  for (double t : axis_ticks(y.lo, y.hi, chart.y_unit)) {
    svg.line(kLeft, sy(t), kLeft + plot_w, sy(t), "grid");
    svg.text(kLeft - 6, sy(t) + 4, format_tick(t, chart.y_unit), "tick end");
  }
  if (categorical) {
    for (size_t i = 0; i < chart.x_categories.size(); ++i) {
      svg.text(sx(static_cast<double>(i)), kTop + plot_h + 16, chart.x_categories[i],
               "tick middle");
    }
  } else {
    for (double t : axis_ticks(x.lo, x.hi, chart.x_unit)) {
      svg.line(sx(t), kTop + plot_h, sx(t), kTop + plot_h + 4, "axis");
      svg.text(sx(t), kTop + plot_h + 16, format_tick(t, chart.x_unit), "tick middle");
    }
  }
  svg.line(kLeft, kTop + plot_h, kLeft + plot_w, kTop + plot_h, "axis");
  svg.line(kLeft, kTop, kLeft, kTop + plot_h, "axis");
  svg.text(kLeft + plot_w / 2, kTop + plot_h + 32, chart.x_label, "label middle");
  svg.text(kLeft, kTop - 10, chart.y_label, "label");
  for (const auto& [value, label] : chart.hlines) {
    svg.line(kLeft, sy(value), kLeft + plot_w, sy(value), "ref");
    svg.text(kLeft + plot_w - 4, sy(value) - 4, label, "note end");
  }
  for (const auto& [value, label] : chart.vlines) {
    svg.line(sx(value), kTop, sx(value), kTop + plot_h, "ref");
    // Many would overlap: the caller then lists them.
    if (chart.vlines.size() <= 4) svg.text(sx(value) + 3, kTop + 10, label, "note");
  }
  for (size_t k = 0; k < chart.series.size(); ++k) {
    const LineSeries& s = chart.series[k];
    std::string points;
    for (size_t i = 0; i < s.points.size(); ++i) {
      if (s.step && i > 0) {
        points +=
            svg_number(sx(s.points[i].first)) + "," + svg_number(sy(s.points[i - 1].second)) + " ";
      }
      points += svg_number(sx(s.points[i].first)) + "," + svg_number(sy(s.points[i].second)) + " ";
    }
    if (!points.empty()) points.pop_back();
    svg.element("polyline",
                {{"points", points}, {"class", "series " + series_class(k)}, {"data-tip", s.name}});
    if (!s.step && s.points.size() <= 64) {
      for (const auto& [px, py] : s.points) {
        svg.element("circle", {{"cx", svg_number(sx(px))},
                               {"cy", svg_number(sy(py))},
                               {"r", "3"},
                               {"class", "dot " + series_class(k)},
                               {"data-tip", s.name + ": " + format_value(py, chart.y_unit)}});
      }
    }
    const double lx =
        kLeft + static_cast<double>(k % per_row) * (plot_w / static_cast<double>(per_row));
    const double ly = chart.height + 14 + kLegendRow * static_cast<double>(k / per_row);
    svg.rect(lx, ly - 9, 10, 10, "key " + series_class(k));
    svg.text(lx + 14, ly, s.name, "legend");
  }
  for (const ChartMarker& m : chart.markers) {
    svg.element("circle", {{"cx", svg_number(sx(m.x))},
                           {"cy", svg_number(sy(m.y))},
                           {"r", "5"},
                           {"class", m.css_class},
                           {"data-value", m.value},
                           {"data-key", m.key},
                           {"data-tip", m.label}});
    // Several labels would overlap: then the caller lists them (hover shows each).
    if (chart.markers.size() == 1) svg.text(sx(m.x) + 7, sy(m.y) - 6, m.label, "note");
  }
  svg.raw("</g>");
  return svg.finish();
}

std::string render_bar_chart(const std::string& title, const std::vector<Bar>& bars, Unit unit,
                             const std::string& css_class) {
  constexpr double kWidth = 960, kRow = 24, kLabel = 260, kValue = 300;
  const double height = kTop + kRow * static_cast<double>(bars.size()) + 10;
  double top = 0;
  for (const Bar& bar : bars) {
    if (std::isfinite(bar.value)) top = std::max(top, bar.value);
  }
  if (top <= 0) top = 1;
  const double plot_w = kWidth - kLabel - kValue;
  SvgWriter svg(kWidth, height, css_class);
  svg.text(8, 16, title, "title");
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& bar = bars[i];
    const double y = kTop + kRow * static_cast<double>(i);
    const double w = std::isfinite(bar.value) ? bar.value / top * plot_w : 0;
    svg.text(kLabel - 8, y + 15, bar.label, "tick end");
    const std::string value =
        format_value(bar.value, unit) + (bar.note.empty() ? "" : "  " + bar.note);
    svg.rect(kLabel, y + 3, std::max(w, 0.5), kRow - 8, bar.highlight ? "bar hi" : "bar",
             bar.label + ": " + value);
    svg.text(kLabel + w + 6, y + 15, value, "legend");
  }
  return svg.finish();
}

std::vector<std::pair<double, double>> downsample_max(
    const std::vector<std::pair<double, double>>& points, double lo, double hi, int columns) {
  if (points.size() <= static_cast<size_t>(2 * columns) || !(hi > lo)) return points;
  std::vector<std::pair<double, double>> out;
  const double width = (hi - lo) / columns;
  // Clamped before the conversion, which is undefined for values out of a long's range.
  const auto column_of = [&](double x) {
    const double c = std::floor((x - lo) / width);
    return static_cast<long>(std::isfinite(c) ? std::clamp(c, -1.0, columns + 1.0) : -1.0);
  };
  size_t i = 0;
  while (i < points.size()) {
    const long column = column_of(points[i].first);
    // The first point of the column and the largest; the value entering the next column
    // is the column's last, kept as the first point of the next.
    std::pair<double, double> peak = points[i];
    size_t j = i;
    while (j < points.size() && column_of(points[j].first) == column) {
      if (points[j].second > peak.second) peak = points[j];
      ++j;
    }
    out.push_back(points[i]);
    if (peak != points[i]) out.push_back(peak);
    if (j - 1 != i && points[j - 1] != peak) out.push_back(points[j - 1]);
    i = j;
  }
  return out;
}

}  // namespace pipetwin
