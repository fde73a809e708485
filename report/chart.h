// Line and bar charts as inline SVG: axes with round ticks, a legend, reference lines and
// marked points. The memory, link, sweep, convergence and freeze charts are all these.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pipetwin {

enum class Unit { kNumber, kSeconds, kBytes, kRatio };

// How a value of `unit` reads on an axis or label: "636.879 ms", "19.94 GiB", "30.2%", "12".
std::string format_value(double value, Unit unit);

// Round positions for an axis over [lo, hi]: 1, 2 or 5 times a power of ten apart (of GiB,
// MiB, ... for bytes), at most 21.
std::vector<double> axis_ticks(double lo, double hi, Unit unit);

// A tick's label, as short as it can be: "200 ms", "1.5 s", "20 GiB", "40%".
std::string format_tick(double value, Unit unit);

struct LineSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x increasing
  bool step = false;                              // a counter: the value holds until the next point
};

struct ChartMarker {
  double x = 0;
  double y = 0;
  std::string label;
  std::string css_class = "peak";
  std::string value;  // exact value for scripts and tests: data-value
  std::string key;    // what the point is of (a device id): data-key
};

struct LineChart {
  std::string title;
  std::string css_class = "chart";
  std::vector<std::pair<std::string, std::string>> data;  // data-* attributes of the <svg>
  std::string x_label;
  Unit x_unit = Unit::kNumber;
  std::string y_label;
  Unit y_unit = Unit::kNumber;
  std::vector<std::string> x_categories;  // when set, x is an index into them
  std::vector<LineSeries> series;
  std::vector<std::pair<double, std::string>> hlines;  // reference lines (y, label)
  std::vector<std::pair<double, std::string>> vlines;  // (x, label)
  std::vector<ChartMarker> markers;
  bool y_from_zero = true;
  double width = 760;
  double height = 280;
};

std::string render_line_chart(const LineChart& chart);

struct Bar {
  std::string label;
  double value = 0;
  bool highlight = false;
  std::string note;  // after the value, e.g. "+12.3%"
};

// Horizontal bars, one per row, longest scale from 0.
std::string render_bar_chart(const std::string& title, const std::vector<Bar>& bars, Unit unit,
                             const std::string& css_class = "chart bars");

// A step series reduced to at most three points per column of `columns` over [lo, hi]: each
// column keeps its largest value, so a peak survives any reduction.
std::vector<std::pair<double, double>> downsample_max(
    const std::vector<std::pair<double, double>>& points, double lo, double hi, int columns);

}  // namespace pipetwin
