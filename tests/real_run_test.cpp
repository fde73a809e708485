// `pipetwin run`: the Program on real LibTorch CPU ranks over c10d Gloo, on loopback.
// The pipeline must compute exactly what a single-process training computes, record every
// instruction, and fail cleanly when a rank dies or the environment is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using ::testing::HasSubstr;
using testing::run_pipetwin;
using testing::TempDir;

#ifndef PIPETWIN_HAS_TORCH
#define SKIP_WITHOUT_TORCH() GTEST_SKIP() << "built without LibTorch"
#else
#define SKIP_WITHOUT_TORCH() (void)0
#endif

constexpr const char* kScenario = "builtin:mlp-cpu-2rank";

nlohmann::json run_json(const std::string& args) {
  const CliResult r = run_pipetwin("run " + std::string(kScenario) + " " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json{};
}

void expect_close(const nlohmann::json& a, const nlohmann::json& b, double tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a[i].get<double>(), y = b[i].get<double>();
    EXPECT_NEAR(x, y, tolerance * std::max(1.0, std::abs(y))) << "entry " << i;
  }
}

class RealRun : public ::testing::TestWithParam<std::string> {};

// Same seed, same data, gradients accumulated over the minibatch: the per-iteration losses
// and the trained weights of the pipeline equal those of one process without a pipeline.
TEST_P(RealRun, EqualsTheSingleProcessReference) {
  SKIP_WITHOUT_TORCH();
  const std::string sets = "--set training.iterations=3 " + GetParam();
  const nlohmann::json pipeline = run_json(sets);
  const nlohmann::json reference = run_json(sets + " --reference");
  ASSERT_FALSE(pipeline.empty());
  expect_close(pipeline["losses"], reference["losses"], 1e-6);
  expect_close(pipeline["layer_weight_sums"], reference["layer_weight_sums"], 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, RealRun,
    ::testing::Values("--set schedule.kind=GPIPE", "--set schedule.kind=ONE_F_ONE_B",
                      "--set schedule.kind=ONE_F_ONE_B --set training.optimizer=SGD",
                      // Unequal cuts: stage 1 cuts the batch differently from stage 0.
                      "--set schedule.kind=UMPIPE "
                      "--set 'schedule.stage_plans[0]=forward_sizes: [8,24,32] "
                      "backward_sizes: [8,24,32]' "
                      "--set 'schedule.stage_plans[1]=forward_sizes: [16,16,16,16] "
                      "backward_sizes: [16,16,16,16]'"),
    [](const auto& info) { return "case" + std::to_string(info.index); });

TEST(RealRunTimeline, RecordsEveryInstructionInProgramOrder) {
  SKIP_WITHOUT_TORCH();
  const TempDir dir;
  const auto timeline = (dir.path() / "measured.timeline").string();
  const CliResult r = run_pipetwin("run " + std::string(kScenario) +
                                   " --set training.iterations=2 --json --timeline " + timeline);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const Timeline t = read_timeline_file(timeline);
  EXPECT_EQ(t.source, "torch");
  ASSERT_EQ(static_cast<int>(t.spans.size()), j["instructions"].get<int>());
  std::map<uint64_t, std::vector<const Span*>> pairs;
  std::map<std::tuple<int, int, int>, double> recv_end;  // (stage, lo, iteration) -> end
  for (const Span& s : t.spans) {
    EXPECT_GE(s.end_s, s.start_s) << s.name;
    EXPECT_GE(s.start_s, -1e-3) << s.name;  // on rank 0's clock, from its start
    if (s.flow_id) pairs[s.flow_id].push_back(&s);
    if (s.op == "RECV_ACT") recv_end[{s.stage, s.range_lo, s.iteration}] = s.end_s;
  }
  for (const auto& [id, ends] : pairs) EXPECT_EQ(ends.size(), 2u);
  for (const Span& s : t.spans) {  // a forward starts after its activations arrived
    if (s.op != "FWD" || s.stage == 0) continue;
    EXPECT_GE(s.start_s, recv_end.at({s.stage, s.range_lo, s.iteration})) << s.name;
  }
}

TEST(RealRunTraining, LossGoesDown) {
  SKIP_WITHOUT_TORCH();
  const nlohmann::json j = run_json("--set training.iterations=30");
  ASSERT_FALSE(j.empty());
  const auto& losses = j["losses"];
  EXPECT_LT(losses.back().get<double>(), 0.9 * losses.front().get<double>());
}

TEST(RealRunFaults, ADeadRankFailsTheRunAndLeavesNoProcess) {
  SKIP_WITHOUT_TORCH();
  const auto started = std::chrono::steady_clock::now();
  // Rank 1 is killed just before its 5th compute instruction.
  ::setenv("PIPETWIN_CRASH_AT", "1:5", 1);
  const CliResult dead =
      run_pipetwin("run " + std::string(kScenario) +
                   " --set training.iterations=3 --timeout 10 --set name=fault-test");
  ::unsetenv("PIPETWIN_CRASH_AT");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(dead.exit_code, 1);
  EXPECT_THAT(dead.err, HasSubstr("rank 1 was killed"));
  EXPECT_THAT(dead.err, HasSubstr("rank 0 failed at"));  // and what it waited on
  EXPECT_LT(seconds, 40);
  // No rank of that run is left.
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string cmdline = testing::read_all(entry.path() / "cmdline");
    EXPECT_EQ(cmdline.find("fault-test"), std::string::npos) << entry.path();
  }
}

TEST(RealRunFaults, WrongWorldSizeIsBadInput) {
  SKIP_WITHOUT_TORCH();
  ::setenv("RANK", "0", 1);
  ::setenv("WORLD_SIZE", "3", 1);
  const CliResult wrong = run_pipetwin(std::string("run ") + kScenario);
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_THAT(wrong.err, HasSubstr("WORLD_SIZE=3 but the schedule needs 2 ranks"));
}

TEST(RealRunFaults, UnreachableMasterIsAClearError) {
  SKIP_WITHOUT_TORCH();
  ::setenv("RANK", "1", 1);
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", "1", 1);  // nothing listens there
  const CliResult r = run_pipetwin(std::string("run ") + kScenario + " --timeout 3");
  for (const char* v : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) ::unsetenv(v);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("rank 1: cannot reach the master at 127.0.0.1:1"));
}

TEST(RealRunFaults, ModelsWithoutModulesAreRejected) {
  SKIP_WITHOUT_TORCH();
  const CliResult r = run_pipetwin("run builtin:uniform");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("builds zoo models"));
}

}  // namespace
}  // namespace pipetwin

namespace pipetwin {
namespace {

TEST(RealRunMeasure, ProfileAndCalibrateWriteScenariosTheSimulatorsRun) {
  SKIP_WITHOUT_TORCH();
  const TempDir dir;
  const auto profiled = (dir.path() / "profiled.textproto").string();
  const auto calibrated = (dir.path() / "calibrated.textproto").string();
  const CliResult p = run_pipetwin(std::string("profile ") + kScenario +
                                   " --batches 1,4,8 --repeats 3 -o " + profiled);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const std::string text = testing::read_all(profiled);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n') > 20, true);
  EXPECT_THAT(text, HasSubstr("cost_points"));
  EXPECT_THAT(text, HasSubstr("optim_ms"));
  EXPECT_THAT(text, HasSubstr("partition: 2"));  // the placement is written out
  const CliResult c =
      run_pipetwin("calibrate " + profiled + " --sizes 4096,65536,1048576 -o " + calibrated);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_THAT(c.err, HasSubstr("fit: latency"));
  const CliResult s = run_pipetwin("simulate " + calibrated + " --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const nlohmann::json j = nlohmann::json::parse(s.out);
  EXPECT_GT(j["iteration_time_s"].get<double>(), 0);
  EXPECT_EQ(j["stages"], 2);
}

}  // namespace
}  // namespace pipetwin
