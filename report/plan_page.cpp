#include "report/plan_page.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "report/chart.h"
#include "report/svg.h"
#include "report/text_units.h"

namespace pipetwin {
namespace {

// Rows of stages, columns of microbatch sizes, each cell the count of microbatches of
// that size the stage runs in one direction.
std::string heat_map(const UnequalPlan& plan, bool forward) {
  std::set<int32_t> sizes;
  for (const StagePlan& stage : plan.stages) {
    for (int32_t size : forward ? stage.forward_sizes : stage.backward_sizes) sizes.insert(size);
  }
  const std::vector<int32_t> columns(sizes.begin(), sizes.end());
  constexpr double kLabel = 70, kCell = 44, kRow = 26, kTop = 46;
  const double width = kLabel + kCell * static_cast<double>(columns.size()) + 10;
  const double height = kTop + kRow * static_cast<double>(plan.stages.size()) + 8;
  int32_t most = 1;
  std::vector<std::map<int32_t, int32_t>> counts;
  for (const StagePlan& stage : plan.stages) {
    std::map<int32_t, int32_t> count;
    for (int32_t size : forward ? stage.forward_sizes : stage.backward_sizes) {
      most = std::max(most, ++count[size]);
    }
    counts.push_back(std::move(count));
  }
  SvgWriter svg(std::max(width, 260.0), height, "heat");
  svg.text(4, 14, std::string(forward ? "Forward" : "Backward") + " microbatches per size",
           "title");
  svg.text(kLabel, 30, "microbatch size (samples)", "label");
  for (size_t c = 0; c < columns.size(); ++c) {
    svg.text(kLabel + kCell * (static_cast<double>(c) + 0.5), kTop - 4, std::to_string(columns[c]),
             "tick middle");
  }
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const double y = kTop + kRow * static_cast<double>(s);
    svg.open("g", {{"class", "stage-row"}, {"data-stage", std::to_string(s)}});
    svg.text(kLabel - 8, y + 17, "stage " + std::to_string(s), "tick end");
    for (size_t c = 0; c < columns.size(); ++c) {
      const auto found = counts[s].find(columns[c]);
      const int32_t n = found == counts[s].end() ? 0 : found->second;
      const double x = kLabel + kCell * static_cast<double>(c);
      // Blue, darker for more microbatches; white for none.
      const double share = static_cast<double>(n) / most;
      const int r = static_cast<int>(255 - share * (255 - 78));
      const int g = static_cast<int>(255 - share * (255 - 121));
      const int b = static_cast<int>(255 - share * (255 - 167));
      svg.element("rect", {{"x", svg_number(x)},
                           {"y", svg_number(y)},
                           {"width", svg_number(kCell - 2)},
                           {"height", svg_number(kRow - 2)},
                           {"fill", "rgb(" + std::to_string(r) + "," + std::to_string(g) + "," +
                                        std::to_string(b) + ")"},
                           {"data-tip", "stage " + std::to_string(s) + ": " + std::to_string(n) +
                                            " of size " + std::to_string(columns[c])}});
      if (n > 0) {
        svg.text(x + kCell / 2 - 1, y + 17, std::to_string(n),
                 share > 0.6 ? "middle light" : "middle");
      }
    }
    svg.close("g");
  }
  return svg.finish();
}

}  // namespace

std::vector<std::pair<std::string, double>> umpipe_baseline_rows(const UmpipeSearchResult& result,
                                                                 int32_t microbatches) {
  const UmpipeBaselineResults& b = result.baselines;
  const std::string m = std::to_string(microbatches);
  std::vector<std::pair<std::string, double>> rows = {
      {"GPipe, " + m + " equal microbatches", b.gpipe_s},
      {"1F1B, " + m + " equal microbatches", b.one_f_one_b_s},
      {"local greedy", b.local_greedy_s},
      {"global greedy DP (" + std::to_string(b.global_dp.microbatches) + " microbatches)",
       b.global_dp.seconds}};
  if (b.exhaustive) {
    rows.push_back(
        {"exhaustive (" + std::to_string(b.exhaustive->plans) + " plans)", b.exhaustive->seconds});
  }
  return rows;
}

void add_umpipe_sections(HtmlPage& page, const UmpipeSearchResult& result, int32_t microbatches) {
  LineChart convergence;
  convergence.title = "Best iteration time after each generation";
  convergence.css_class = "chart convergence";
  convergence.x_label = "generation";
  convergence.y_label = "iteration time";
  convergence.y_unit = Unit::kSeconds;
  convergence.y_from_zero = false;
  LineSeries best{"DGAP's best plan so far", {}, true};
  for (size_t g = 0; g < result.dgap.history.size(); ++g) {
    if (std::isfinite(result.dgap.history[g])) {
      best.points.emplace_back(static_cast<double>(g), result.dgap.history[g]);
    }
  }
  convergence.series.push_back(std::move(best));
  page.add_section(
      "Convergence of the search",
      render_line_chart(convergence) +
          paragraph_html(std::to_string(result.dgap.evaluations) + " plans evaluated in " +
                             format_seconds(result.search_wall_s) + ".",
                         "note"));
  page.add_section("The plan",
                   "<div class=\"charts\">" + heat_map(result.best, true) +
                       heat_map(result.best, false) + "</div>" +
                       paragraph_html("Each cell counts the microbatches of that size a stage "
                                      "runs in one iteration.",
                                      "note"));
  std::vector<Bar> bars;
  for (const auto& [name, seconds] : umpipe_baseline_rows(result, microbatches)) {
    bars.push_back(
        {name, seconds, false,
         "UMPIPE speed-up " + format_number("%+.2f%%", 100 * (seconds / result.best_s - 1))});
  }
  bars.push_back({"UMPIPE plan", result.best_s, true, ""});
  page.add_section("Baselines", render_bar_chart("Iteration time", bars, Unit::kSeconds));
}

std::string layer_ranges_text(const std::vector<int>& layers) {
  std::string text;
  for (size_t a = 0; a < layers.size();) {
    size_t b = a;
    while (b + 1 < layers.size() && layers[b + 1] == layers[b] + 1) ++b;
    if (!text.empty()) text += ",";
    text += std::to_string(layers[a]);
    if (b > a) {
      text += '-';
      text += std::to_string(layers[b]);
    }
    a = b + 1;
  }
  return text;
}

void add_pipedream_sections(HtmlPage& page, const ResolvedScenario& setup,
                            const PipedreamPlan& plan) {
  constexpr double kStageW = 150, kGap = 90, kTop = 64, kReplicaH = 22;
  size_t most = 1;
  for (const PlannedStage& stage : plan.stages) most = std::max(most, stage.devices.size());
  const double box_h = 12 + kReplicaH * static_cast<double>(most);
  const double width = 20 + (kStageW + kGap) * static_cast<double>(plan.stages.size());
  SvgWriter svg(std::max(width, 560.0), kTop + box_h + 20, "pipedream");
  svg.text(10, 16, "Stages left to right; a box per replica, each on its device", "title");
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const PlannedStage& stage = plan.stages[s];
    const double x = 10 + (kStageW + kGap) * static_cast<double>(s);
    svg.open("g", {{"class", "stage"},
                   {"data-stage", std::to_string(s)},
                   {"data-replicas", std::to_string(stage.devices.size())}});
    svg.text(x, kTop - 30,
             "stage " + std::to_string(s) + ": layers " + layer_ranges_text(stage.layers),
             "legend");
    svg.text(x, kTop - 14, format_seconds(stage.cost.time_s) + " per microbatch", "note");
    svg.rect(x, kTop, kStageW, box_h, "stage-box");
    for (size_t r = 0; r < stage.devices.size(); ++r) {
      const double y = kTop + 6 + kReplicaH * static_cast<double>(r);
      const std::string device = setup.cluster.devices[stage.devices[r]].name;
      svg.rect(x + 6, y, kStageW - 12, kReplicaH - 4, "replica",
               "stage " + std::to_string(s) + " replica " + std::to_string(r) + " on " + device);
      svg.text(x + kStageW / 2, y + 13, device, "middle");
    }
    if (s + 1 < plan.stages.size()) {
      const double y = kTop + box_h / 2;
      svg.line(x + kStageW + 4, y, x + kStageW + kGap - 6, y, "arrow");
      svg.raw("<path d=\"M" + svg_number(x + kStageW + kGap - 4) + " " + svg_number(y) +
              " l-7 -4 v8 z\" class=\"arrowhead\"/>");
      svg.text(x + kStageW + kGap / 2, y - 6, format_seconds(stage.cost.cut_s), "note middle");
    }
    svg.close("g");
  }
  page.add_section(
      "Stages and replicas",
      svg.finish() +
          paragraph_html("Bottleneck " + format_seconds(plan.bottleneck_s) + " per microbatch; " +
                             std::to_string(plan.devices_used) + " of " +
                             std::to_string(setup.cluster.devices.size()) + " devices used.",
                         "note"));
}

}  // namespace pipetwin
