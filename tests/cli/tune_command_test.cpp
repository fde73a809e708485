// `pipetwin tune` on the command line: its JSON object, the scenario it writes (which
// simulates to the time it reported), and a clear error for a bad --fix.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace pipetwin {
namespace {

using nlohmann::json;
using testing::run_pipetwin;
using testing::TempDir;

const char* kSmallSpace =
    "builtin:gpt-8gpu-1f1b.textproto --fix microbatch_size=1,2 --fix training.zero_stage=0 "
    "--refine 3";

TEST(TuneCli, JsonHasTheBestTheOwnTheFrontAndTheCounts) {
  const auto r = run_pipetwin(std::string("tune ") + kSmallSpace + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  for (const char* key : {"best", "own", "pareto", "evaluated", "skipped", "wall_s"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key :
       {"set", "iteration_time_s", "throughput_samples_per_s", "peak_memory_bytes"}) {
    EXPECT_TRUE(j["best"].contains(key)) << key;
    EXPECT_TRUE(j["own"].contains(key)) << key;
  }
  EXPECT_LE(j["best"]["iteration_time_s"].get<double>(),
            j["own"]["iteration_time_s"].get<double>());
  EXPECT_GT(j["evaluated"].get<int>(), 0);
  EXPECT_FALSE(j["pareto"].empty());
}

TEST(TuneCli, TheWrittenScenarioSimulatesToTheBestsTime) {
  TempDir dir;
  const std::string out = (dir.path() / "best.textproto").string();
  const auto r =
      run_pipetwin(std::string("tune ") + kSmallSpace + " --json --write-scenario " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double best = json::parse(r.out)["best"]["iteration_time_s"].get<double>();
  const auto sim = run_pipetwin("simulate " + out + " --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_NEAR(json::parse(sim.out)["iteration_time_s"].get<double>(), best, 1e-9 * best);
}

// A slow GPU (cluster.overrides): every candidate is timed with it, so the scenario written
// simulates to the best's time, and the best is slower than on the even cluster.
TEST(TuneCli, ASlowDeviceIsInEveryCandidatesTime) {
  TempDir dir;
  const std::string out = (dir.path() / "best.textproto").string();
  const std::string slow =
      " --set cluster.overrides[0].devices=7 --set cluster.overrides[0].compute_scale=0.5";
  const auto r =
      run_pipetwin(std::string("tune ") + kSmallSpace + slow + " --json --write-scenario " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double best = json::parse(r.out)["best"]["iteration_time_s"].get<double>();
  const auto sim = run_pipetwin("simulate " + out + " --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_NEAR(json::parse(sim.out)["iteration_time_s"].get<double>(), best, 1e-9 * best);
  const auto even = run_pipetwin(std::string("tune ") + kSmallSpace + " --json");
  ASSERT_EQ(even.exit_code, 0) << even.err;
  EXPECT_GT(best, json::parse(even.out)["best"]["iteration_time_s"].get<double>());
}

TEST(TuneCli, TheReportDrawsTheParetoFrontWithTheBestAndTheOwnMarked) {
  TempDir dir;
  const std::string page = (dir.path() / "tune.html").string();
  const auto r = run_pipetwin(std::string("tune ") + kSmallSpace + " --report " + page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = testing::read_all(page);
  EXPECT_NE(html.find("chart pareto"), std::string::npos);
  EXPECT_NE(html.find("data-key=\"best\""), std::string::npos);
  EXPECT_NE(html.find("data-key=\"own\""), std::string::npos);
  EXPECT_NE(html.find("Skipped"), std::string::npos);
}

TEST(TuneCli, ABadFixIsAnInputError) {
  const auto r = run_pipetwin("tune builtin:gpt-8gpu-1f1b.textproto --fix schedule.stagse=2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean 'schedule.stages'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pipetwin
