// --report of every command end to end: the file is written, whole, with what its command
// computed; a path that cannot be written is bad input (exit 2) before any work.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli_runner.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using ::testing::HasSubstr;
using testing::read_all;
using testing::run_pipetwin;
using testing::TempDir;

TEST(ReportCli, SimulateReportsTheTextReportsHeadline) {
  const TempDir dir;
  const auto report = dir.path() / "quickstart.html";
  const CliResult r = run_pipetwin("simulate --report " + report.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_all(report);
  EXPECT_EQ(testing::count_of(html, "class=\"lane\""), 4u);
  for (const char* label : {"iteration time", "training time", "throughput", "bubble"}) {
    const std::regex line(std::string("\n") + label + " +([^\n]+)\n");
    std::smatch match;
    ASSERT_TRUE(std::regex_search(r.out, match, line)) << label << " not in\n" << r.out;
    EXPECT_THAT(html, HasSubstr("<b>" + match[1].str() + "</b><span>" + label + "</span>"));
  }
  EXPECT_THAT(r.out, HasSubstr("report written to " + report.string()));
  EXPECT_FALSE(std::filesystem::exists(report.string() + ".tmp"));
}

TEST(ReportCli, SimulateOfAFreezeScenarioReportsItsPhases) {
  const TempDir dir;
  const auto report = dir.path() / "freeze.html";
  const CliResult json = run_pipetwin("simulate builtin:freezepipe-gpt-8gpu --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const size_t phases = nlohmann::json::parse(json.out)["phases"].size();
  const CliResult r =
      run_pipetwin("simulate builtin:freezepipe-gpt-8gpu --report " + report.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_all(report);
  EXPECT_EQ(testing::count_of(html, "class=\"bar\""), phases);  // one per phase
  EXPECT_EQ(testing::count_of(html, "class=\"chart frozen\""), 1u);
  EXPECT_EQ(testing::count_of(html, "class=\"lane\""), 8u);
}

TEST(ReportCli, AnUnwritableReportPathIsBadInput) {
  const CliResult r = run_pipetwin("simulate --report /nonexistent-directory/r.html");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent-directory/r.html"));
}

TEST(ReportCli, CompareAndReportReadSavedTimelines) {
  const TempDir dir;
  const std::string a = (dir.path() / "a.timeline").string();
  const std::string b = (dir.path() / "b.timeline").string();
  ASSERT_EQ(run_pipetwin("simulate --timeline " + a).exit_code, 0);
  ASSERT_EQ(run_pipetwin("simulate --set training.microbatches=8 --timeline " + b).exit_code, 0);

  const std::string compared = (dir.path() / "compare.html").string();
  CliResult r = run_pipetwin("compare " + a + " " + a + " --labels sim,again --report " + compared);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string html = read_all(compared);
  EXPECT_EQ(testing::count_of(html, "class=\"gantt\""), 2u);
  EXPECT_EQ(testing::count_of(html, "class=\"lane\""), 8u);
  EXPECT_THAT(html, HasSubstr("<b>+0.00%</b><span>makespan again vs sim</span>"));

  const std::string both = (dir.path() / "both.html").string();
  r = run_pipetwin("report " + a + " " + b + " -o " + both);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  html = read_all(both);
  EXPECT_EQ(testing::count_of(html, "class=\"gantt\""), 2u);
  EXPECT_EQ(testing::count_of(html, "class=\"chart breakdown\""), 2u);

  r = run_pipetwin("report " + (dir.path() / "missing.timeline").string() + " -o " + both);
  EXPECT_EQ(r.exit_code, 2);
}

TEST(ReportCli, SweepChartsEveryMetricAgainstEveryVariedField) {
  const TempDir dir;
  const std::string report = (dir.path() / "sweep.html").string();
  const CliResult r = run_pipetwin(
      "sweep --vary training.microbatches=4,8 --vary schedule.kind=GPIPE,ONE_F_ONE_B -j 2 "
      "--report " +
      report);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_all(report);
  EXPECT_EQ(testing::count_of(html, "class=\"chart sweep\""), 4u * 2);
  EXPECT_EQ(testing::count_of(html, "<td>ok</td>"), 4u);
}

TEST(ReportCli, PlanReportsUmpipeAndPipedream) {
  const TempDir dir;
  const std::string umpipe = (dir.path() / "umpipe.html").string();
  CliResult r = run_pipetwin(
      "plan --search umpipe --population 8 --generations 3 --threads 1 --report " + umpipe);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string html = read_all(umpipe);
  EXPECT_EQ(testing::count_of(html, "class=\"chart convergence\""), 1u);
  EXPECT_EQ(testing::count_of(html, "class=\"stage-row\""),
            2u * 4);  // 4 stages, forward and backward

  const std::string pipedream = (dir.path() / "pipedream.html").string();
  r = run_pipetwin("plan --search pipedream --report " + pipedream);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  html = read_all(pipedream);
  EXPECT_GE(testing::count_of(html, "<g class=\"stage\""), 1u);
}

}  // namespace
}  // namespace pipetwin
