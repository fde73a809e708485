// Long runs answered from their steady state: `simulate` of a run past --max-instructions
// simulates a few iterations and extrapolates, and every figure of its --json equals the
// whole run's, simulated iteration by iteration, for every kind of schedule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace pipetwin {
namespace {

using nlohmann::json;

json simulate_json(const std::string& args) {
  const testing::CliResult r = testing::run_pipetwin("simulate " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json::object();
}

void expect_close(const json& whole, const json& extrapolated, const std::string& key) {
  const double a = whole.at(key).get<double>(), b = extrapolated.at(key).get<double>();
  EXPECT_NEAR(b, a, 1e-9 * std::max(1.0, std::abs(a))) << key;
}

TEST(SteadyState, ExtrapolationEqualsTheWholeRun) {
  const std::string root = std::string(PIPETWIN_SOURCE_DIR) + "/scenarios/";
  const std::vector<std::string> cases = {
      "builtin:quickstart.textproto",
      root + "gpt-8gpu-1f1b.textproto --set schedule.kind=PIPEDREAM_2BW",
      root + "umpipe-vgg16.textproto",
      root + "umpipe-vgg16.textproto --set schedule.kind=APAPO",
      root + "vgg16-pipedream-4gpu.textproto --set schedule.kind=PIPEDREAM_ASYNC",
      root + "offload-vgg16-a100.textproto",
      root +
          "whatif-nvlink-vs-pcie.textproto --set schedule.kind=INTERLEAVED_ONE_F_ONE_B "
          "--set schedule.virtual_stages=2",
  };
  for (const std::string& scenario : cases) {
    SCOPED_TRACE(scenario);
    const std::string args = scenario + " --set training.iterations=60";
    const json whole = simulate_json(args);
    // Half the whole Program: too large to build whole, large enough for the probes.
    const int64_t limit = whole.at("instructions").get<int64_t>() / 2;
    const json extrapolated = simulate_json(args + " --max-instructions " + std::to_string(limit));
    ASSERT_TRUE(extrapolated.contains("steady_state"));
    EXPECT_FALSE(whole.contains("steady_state"));
    EXPECT_EQ(extrapolated.at("instructions"), whole.at("instructions"));
    EXPECT_EQ(extrapolated.at("iterations"), 60);
    for (const char* key : {"training_time_s", "iteration_time_s", "throughput_samples_per_s",
                            "bubble_ratio", "comm_s", "exposed_comm_s"}) {
      expect_close(whole, extrapolated, key);
    }
    ASSERT_EQ(whole.at("devices").size(), extrapolated.at("devices").size());
    for (size_t d = 0; d < whole.at("devices").size(); ++d) {
      for (const char* key :
           {"busy_s", "bubble_ratio", "comm_s", "exposed_comm_s", "peak_memory_bytes"}) {
        expect_close(whole.at("devices")[d], extrapolated.at("devices")[d], key);
      }
    }
    ASSERT_EQ(whole.at("links").size(), extrapolated.at("links").size());
    for (size_t l = 0; l < whole.at("links").size(); ++l) {
      for (const char* key : {"bytes", "busy_s", "busy_fraction"}) {
        expect_close(whole.at("links")[l], extrapolated.at("links")[l], key);
      }
    }
  }
}

}  // namespace
}  // namespace pipetwin
