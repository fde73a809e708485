// What each report holds, read from its markup: the sweep's charts, the plan's heat maps
// and stages, the comparison's ops; and every report is well-formed XML that loads nothing
// from elsewhere.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>

#include "cli_runner.h"
#include "report/html_page.h"
#include "report/svg.h"
#include "report_samples.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using testing::TempDir;

TEST(SweepReport, OneChartPerMetricAndVariedField) {
  const std::string html = testing::sweep_report_html();
  EXPECT_EQ(testing::count_of(html, "class=\"chart sweep\""), kSweepMetrics * 2);
  for (const char* field : {"training.microbatches", "schedule.kind"}) {
    EXPECT_EQ(testing::count_of(html, std::string("data-field=\"") + field + "\""), kSweepMetrics)
        << field;
  }
  // The table below: a row per point, as the text table has them.
  EXPECT_EQ(testing::count_of(html, "<td>ok</td>"), 6u);
}

TEST(PlanReport, HeatMapsHaveARowPerStageAndTheDiagramAStagePerPlannedStage) {
  const std::string html = testing::plan_report_html();
  EXPECT_EQ(testing::count_of(html, "class=\"stage-row\""), 3u * 2);  // forward and backward
  EXPECT_EQ(testing::count_of(html, "class=\"chart convergence\""), 1u);
  EXPECT_NE(html.find("UMPIPE plan"), std::string::npos);
  const ResolvedScenario setup = resolve_scenario(load_scenario("", {}));
  const PipedreamPlan plan = plan_pipedream(planner_problem(setup));
  EXPECT_EQ(testing::count_of(html, "<g class=\"stage\""), plan.stages.size());
  size_t replicas = 0;
  for (const PlannedStage& stage : plan.stages) replicas += stage.devices.size();
  EXPECT_EQ(testing::count_of(html, "class=\"replica\""), replicas);
}

TEST(CompareReport, ADistributionPerOp) {
  const SimulationResult quickstart = testing::simulated_quickstart();
  const std::string html = testing::compare_report_html(quickstart.timeline);
  // Ops whose spans all take no time in A have no relative error to show.
  std::set<std::string> ops;
  for (const Span& span : quickstart.timeline.spans) {
    if (span.duration_s() > 0) ops.insert(span.op);
  }
  EXPECT_EQ(testing::count_of(html, "class=\"op-errors\""), ops.size());
  EXPECT_EQ(testing::count_of(html, "class=\"gantt\""), 2u);
}

TEST(FreezeReport, ABarPerPhaseAndTheMigrations) {
  const std::string html = testing::freeze_report_html(testing::simulated_quickstart().timeline);
  EXPECT_EQ(testing::count_of(html, "class=\"bar\""), 3u);
  EXPECT_EQ(testing::count_of(html, "<td>1.00 GiB</td>"), 1u);
  EXPECT_EQ(testing::count_of(html, "<td>512.00 MiB</td>"), 1u);
}

TEST(Svg, EscapesAndRounds) {
  EXPECT_EQ(escape_xml("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
  EXPECT_EQ(svg_number(12.04), "12");
  EXPECT_EQ(svg_number(-3.24), "-3.2");
  EXPECT_EQ(svg_number(-0.01), "0");
}

TEST(ReportPages, NoExternalResources) {
  for (const auto& [kind, html] : testing::sample_reports()) {
    SCOPED_TRACE(kind);
    EXPECT_EQ(html.find(" src="), std::string::npos);
    EXPECT_EQ(html.find(" href="), std::string::npos);
    EXPECT_EQ(html.find("@import"), std::string::npos);
    EXPECT_EQ(html.find("url(http"), std::string::npos);
  }
}

// Python's XML parser (expat) is strict: it fails on an unclosed tag, a stray & or <, or a
// duplicate attribute. Skipped where python3 is not installed.
TEST(ReportPages, AreWellFormedXml) {
  if (std::system("python3 -c 'import xml.etree.ElementTree' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 not found: the XML well-formedness check is skipped";
  }
  const TempDir dir;
  for (const auto& [kind, html] : testing::sample_reports()) {
    const auto path = dir.path() / (kind + ".html");
    std::ofstream(path) << html;
    const testing::CliResult r = testing::run_binary(
        "python3",
        "-c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' " + path.string());
    EXPECT_EQ(r.exit_code, 0) << kind << ": " << r.err;
  }
}

TEST(ReportPages, AnUnwritablePathIsBadInput) {
  EXPECT_THROW(check_report_path("/nonexistent-directory/report.html"), InputError);
  EXPECT_THROW(write_html_report("/nonexistent-directory/report.html", HtmlPage("t", "c")),
               InputError);
}

}  // namespace
}  // namespace pipetwin
