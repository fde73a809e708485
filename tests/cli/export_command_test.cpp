// `pipetwin export chakra` and `pipetwin simulate --chakra` end to end: a scenario written
// as Chakra traces and run from them takes the time it takes run directly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using ::testing::HasSubstr;
using testing::run_pipetwin;
using testing::TempDir;

nlohmann::json json_of(const std::string& args) {
  const CliResult r = run_pipetwin(args + " --json");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

class ChakraCli : public ::testing::TestWithParam<std::string> {};

TEST_P(ChakraCli, ExportedTracesSimulateToTheSameIterationTime) {
  TempDir dir;
  const std::string out = (dir.path() / "traces").string();
  const std::string scenario =
      "builtin:quickstart --set cluster.gpus_per_node=8 --set training.data_parallel=2";
  const CliResult r = run_pipetwin("export chakra " + scenario + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("--workload-configuration=" + out + "/pipetwin"));
  for (int rank = 0; rank < 8; ++rank) {
    EXPECT_TRUE(std::filesystem::exists(out + "/pipetwin." + std::to_string(rank) + ".et"));
  }
  EXPECT_TRUE(std::filesystem::exists(out + "/comm_group.json"));
  const std::string engine = " --engine " + GetParam();
  const nlohmann::json direct = json_of("simulate " + scenario + engine);
  // The traces name their scenario; without one, simulate --chakra runs on its cluster.
  const nlohmann::json replayed = json_of("simulate --chakra " + out + engine);
  EXPECT_EQ(replayed["iteration_time_s"], direct["iteration_time_s"]);
  EXPECT_EQ(replayed["instructions"], direct["instructions"]);
  EXPECT_EQ(replayed["devices"], direct["devices"]);
}

INSTANTIATE_TEST_SUITE_P(Engines, ChakraCli, ::testing::Values("analytic", "simgrid"));

TEST(ChakraCliErrors, BadDirectoryIsExitCode2) {
  TempDir dir;
  CliResult r = run_pipetwin("simulate --chakra " + (dir.path() / "none").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not a directory of Chakra traces"));
  dir.write("x.0.et", "garbage that is not a protobuf stream");
  r = run_pipetwin("simulate --chakra " + dir.path().string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("x.0.et: message 0 (GlobalMetadata)"));
}

TEST(ChakraCliErrors, TooFewDevicesForTheRanks) {
  TempDir dir;
  const std::string out = dir.path().string();
  ASSERT_EQ(run_pipetwin("export chakra builtin:quickstart --set cluster.gpus_per_node=8 --set "
                         "training.data_parallel=2 -o " +
                         out)
                .exit_code,
            0);
  const CliResult r = run_pipetwin("simulate builtin:mlp-cpu-2rank --chakra " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("the traces have 8 ranks"));
}

TEST(ChakraCliErrors, BadScenarioIsExitCode2) {
  TempDir dir;
  const CliResult r = run_pipetwin("export chakra builtin:quickstart --set schedule.stages=x -o " +
                                   dir.path().string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("schedule.stages"));
}

TEST(ChakraCliErrors, FreezePipeRunsHaveNoSingleProgram) {
  TempDir dir;
  const CliResult r =
      run_pipetwin("export chakra builtin:freezepipe-resnet18-cifar10 -o " + dir.path().string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("freeze: a FreezePipe training run changes its program"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "pipetwin.0.et"));
}

}  // namespace
}  // namespace pipetwin
