// The one scenario writer: files a scenario refers to (a PipeDream profile, a SimGrid
// platform, a freeze log) are relative to the scenario they were read from, so a scenario
// written into another folder must have them rebased, or it no longer loads.
#include "sim/scenario/scenario_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_runner.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const fs::path kScenarios = fs::path(PIPETWIN_SOURCE_DIR) / "scenarios";

// The shipped VGG-16 PipeDream scenario and its profile, copied into `dir`.
fs::path copy_profile_scenario(const fs::path& dir) {
  fs::create_directories(dir / "profiles");
  fs::copy_file(kScenarios / "profiles" / "vgg16.graph.txt", dir / "profiles" / "vgg16.graph.txt");
  fs::copy_file(kScenarios / "vgg16-pipedream-4gpu.textproto", dir / "scenario.textproto");
  return dir / "scenario.textproto";
}

TEST(ScenarioWriter, AScenarioWrittenIntoAnotherFolderStillFindsItsProfile) {
  const testing::TempDir tmp;
  const LoadedScenario loaded = load_scenario(copy_profile_scenario(tmp.path() / "a"), {});
  const fs::path output = tmp.path() / "other" / "dir" / "x.textproto";
  fs::create_directories(output.parent_path());
  write_scenario(loaded.scenario, loaded, "# written by a test\n", output.string());

  const std::string text = testing::read_all(output);
  EXPECT_THAT(text, StartsWith("# written by a test\n"));
  EXPECT_THAT(text, HasSubstr("pipedream_profile: \"../../a/profiles/vgg16.graph.txt\""));
  const LoadedScenario written = load_scenario(output.string(), {});
  EXPECT_EQ(resolve_scenario(written).model.layers.size(),
            resolve_scenario(loaded).model.layers.size());
}

TEST(ScenarioWriter, EveryFileFieldIsRebasedAndAbsolutePathsStay) {
  LoadedScenario source;
  source.base_dir = "/data/run";
  proto::Scenario scenario;
  scenario.mutable_model()->set_pipedream_profile("/profiles/model.graph.txt");
  scenario.mutable_cluster()->set_simgrid_platform("platforms/racks.xml");
  scenario.mutable_freeze()->set_log("logs/../logs/run.freezelog");

  const proto::Scenario beside = rebase_file_paths(scenario, source, "/data/out/plan.textproto");
  EXPECT_EQ(beside.model().pipedream_profile(), "/profiles/model.graph.txt");
  EXPECT_EQ(beside.cluster().simgrid_platform(), "../run/platforms/racks.xml");
  EXPECT_EQ(beside.freeze().log(), "../run/logs/run.freezelog");

  // To stdout: the destination is unknown, so the paths become absolute.
  const proto::Scenario printed = rebase_file_paths(scenario, source, "");
  EXPECT_EQ(printed.cluster().simgrid_platform(), "/data/run/platforms/racks.xml");
  EXPECT_EQ(printed.freeze().log(), "/data/run/logs/run.freezelog");
}

TEST(ScenarioWriter, FieldsNotSetStayUnset) {
  LoadedScenario source;
  source.base_dir = "/data/run";
  const proto::Scenario rebased = rebase_file_paths(proto::Scenario(), source, "/x/y.textproto");
  EXPECT_FALSE(rebased.model().has_pipedream_profile());
  EXPECT_FALSE(rebased.cluster().has_simgrid_platform());
  EXPECT_FALSE(rebased.has_freeze());
}

// End to end: `plan --write-plan` into another folder, then `simulate` of the written plan.
TEST(ScenarioWriter, APlanWrittenIntoAnotherFolderSimulates) {
  const testing::TempDir tmp;
  const fs::path scenario = copy_profile_scenario(tmp.path() / "a");
  const fs::path plan = tmp.path() / "plans" / "deep" / "plan.textproto";
  fs::create_directories(plan.parent_path());
  const testing::CliResult planned = testing::run_pipetwin(
      "plan " + scenario.string() + " --search pipedream --write-plan " + plan.string());
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  const testing::CliResult simulated = testing::run_pipetwin("simulate " + plan.string());
  EXPECT_EQ(simulated.exit_code, 0) << simulated.err;
}

}  // namespace
}  // namespace pipetwin
