// `pipetwin goodput` as users run it: the JSON keys of docs/goodput.md, the
// HTML report, and bad rates, intervals and lengths refused with exit 2 naming the field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using testing::run_pipetwin;
using testing::TempDir;

constexpr char kScenario[] = "builtin:llama3-8b-64gpu";

TEST(GoodputCli, PrintsTheRunAndItsJson) {
  const CliResult text = run_pipetwin(std::string("goodput ") + kScenario +
                                      " --tokens 15e12 --gpu-hour-cost 2 --monte-carlo 1000");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* label : {"wall clock", "Monte Carlo", "ETTR", "GPU-hours", "cost"}) {
    EXPECT_NE(text.out.find(label), std::string::npos) << label << "\n" << text.out;
  }
  const CliResult json =
      run_pipetwin(std::string("goodput ") + kScenario + " --steps 1000 --monte-carlo 500 --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["steps"], 1000);
  EXPECT_TRUE(j["cost"].is_null());
  EXPECT_EQ(j["monte_carlo"]["runs"], 500);
  EXPECT_GT(j["ettr"].get<double>(), 0.5);
}

TEST(GoodputCli, WritesItsReport) {
  TempDir dir;
  const std::string report = (dir.path() / "goodput.html").string();
  const CliResult r = run_pipetwin(std::string("goodput ") + kScenario +
                                   " --tokens 1e12 --monte-carlo 0 --report " + report);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = testing::read_all(report);
  for (const char* curve : {"ettr-by-interval", "ettr-by-gpus", "days-by-gpus"}) {
    EXPECT_NE(html.find(std::string("data-curve=\"") + curve + "\""), std::string::npos) << curve;
  }
}

TEST(GoodputCli, RefusesBadRatesIntervalsAndLengths) {
  const auto refused = [](const std::string& args, const std::string& field) {
    const CliResult r = run_pipetwin(std::string("goodput ") + kScenario + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(field), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  };
  refused("--tokens 1e12 --set run.failures.per_1000_node_days=-1",
          "run.failures.per_1000_node_days");
  refused("--tokens 1e12 --set run.checkpoint.interval_steps=-5", "run.checkpoint.interval_steps");
  refused("--tokens 1e12 --set run.checkpoint.storage_write_gbytes_per_s=0",
          "run.checkpoint.storage_write_gbytes_per_s");
  refused("--tokens 1e12 --set run.restart.detect_s=nan", "run.restart.detect_s");
  refused("--tokens 1e12 --set run.failures.causes[0].name=gpu", "run.failures.causes[0]");
  refused("--tokens 1e12 --set run.gpu_hour_cost=-2", "run.gpu_hour_cost");
  refused("", "--tokens");
  refused("--tokens -3", "--tokens");
  refused("--tokens 1e12 --set 'cluster.overrides[0].devices=60-70'",
          "cluster.overrides[0].devices");
}

}  // namespace
}  // namespace pipetwin
