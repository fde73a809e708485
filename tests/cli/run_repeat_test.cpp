// `pipetwin run --warmup N --repeat R` on real LibTorch ranks: the warm-up iterations are
// left out so that the measured timeline lines up with a simulation span for span, and
// repeated runs report the median one. No timing is asserted: only what was kept and
// which run was chosen.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "analysis/metrics.h"
#include "cli_runner.h"
#include "real_run_helpers.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using ::testing::HasSubstr;
using testing::run_binary;
using testing::run_pipetwin;
using testing::TempDir;

constexpr const char* kScenario =
    PIPETWIN_SOURCE_DIR "/scenarios/mlp-cpu-2rank.textproto --set training.iterations=2";

// (device, name, iteration, range) of every span, as compare would key them.
std::multiset<std::tuple<int, std::string, int, int, int>> span_keys(const Timeline& t) {
  std::multiset<std::tuple<int, std::string, int, int, int>> keys;
  for (const Span& s : t.spans)
    keys.insert({s.device, s.name, s.iteration, s.range_lo, s.range_hi});
  return keys;
}

TEST(RealRunNoise, WarmupLeavesTheSpansOfTheSimulatedIterations) {
  SKIP_WITHOUT_TORCH();
  const TempDir dir;
  const std::string measured = (dir.path() / "measured.timeline").string();
  const std::string simulated = (dir.path() / "simulated.timeline").string();
  const CliResult run =
      run_pipetwin(std::string("run ") + kScenario + " --warmup 1 --json --timeline " + measured);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const CliResult sim =
      run_pipetwin(std::string("simulate ") + kScenario + " --timeline " + simulated);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;

  const Timeline m = read_timeline_file(measured);
  const Timeline s = read_timeline_file(simulated);
  ASSERT_EQ(m.spans.size(), s.spans.size());
  EXPECT_EQ(span_keys(m), span_keys(s));
  double first = m.spans.front().start_s;
  int32_t last_iteration = 0;
  for (const Span& span : m.spans) {
    first = std::min(first, span.start_s);
    last_iteration = std::max(last_iteration, span.iteration);
    EXPECT_GE(span.iteration, 0);
  }
  EXPECT_EQ(first, 0.0);
  EXPECT_EQ(last_iteration, 1);
  for (const Counter& c : m.counters) EXPECT_GE(c.time_s, 0.0) << c.name;

  const nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["warmup_iterations"], 1);
  EXPECT_EQ(j["iterations"], 2);
  EXPECT_EQ(j["instructions"].get<size_t>(), m.spans.size());
  EXPECT_EQ(j["losses"].size(), 3u);  // every iteration trained, the warm-up's first
  EXPECT_DOUBLE_EQ(j["training_time_s"].get<double>(), compute_metrics(m, 2, 64).makespan_s);
  EXPECT_EQ(j["machine"]["ranks"], 2);
  EXPECT_EQ(j["machine"]["torch_threads_per_rank"], 1);
  EXPECT_GE(j["machine"]["cores"].get<int>(), 1);
  EXPECT_THAT(j["machine"]["lanes"].dump(), HasSubstr("compute"));

  // compare pairs every span of the two.
  const CliResult c = run_pipetwin("compare " + simulated + " " + measured + " --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const nlohmann::json cj = nlohmann::json::parse(c.out);
  EXPECT_EQ(cj["unmatched_a"], 0);
  EXPECT_EQ(cj["unmatched_b"], 0);
}

TEST(RealRunNoise, RepeatReportsTheMedianRun) {
  SKIP_WITHOUT_TORCH();
  const TempDir dir, tmp;
  const std::string timeline = (dir.path() / "median.timeline").string();
  const std::string trace = (dir.path() / "median.json").string();
  // TMPDIR: the repetitions' directories go there, and must be gone afterwards.
  const CliResult r =
      run_binary("TMPDIR=" + tmp.path().string() + " " + PIPETWIN_BINARY,
                 std::string("run ") + kScenario + " --repeat 3 --json --timeline " + timeline +
                     " --trace " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("repeat")) << r.out;
  const nlohmann::json& repeat = j["repeat"];
  EXPECT_EQ(repeat["runs"], 3);
  std::vector<double> makespans = repeat["makespans_s"];
  ASSERT_EQ(makespans.size(), 3u);
  std::sort(makespans.begin(), makespans.end());
  EXPECT_EQ(repeat["median_s"].get<double>(), makespans[1]);
  EXPECT_EQ(repeat["min_s"].get<double>(), makespans[0]);
  EXPECT_EQ(repeat["max_s"].get<double>(), makespans[2]);
  EXPECT_LE(repeat["p25_s"].get<double>(), repeat["median_s"].get<double>());
  EXPECT_GE(repeat["p75_s"].get<double>(), repeat["median_s"].get<double>());
  const size_t median_run = repeat["median_run"];
  EXPECT_EQ(repeat["makespans_s"][median_run].get<double>(), makespans[1]);
  // The written timeline and the report are the median run's.
  const Timeline t = read_timeline_file(timeline);
  EXPECT_DOUBLE_EQ(compute_metrics(t, 2, 64).makespan_s, makespans[1]);
  EXPECT_DOUBLE_EQ(j["training_time_s"].get<double>(), makespans[1]);
  EXPECT_EQ(j["warmup_iterations"], 1);
  EXPECT_TRUE(std::filesystem::exists(trace));
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
}

TEST(RealRunNoise, TextReportSaysHowTheMachineWasSharedAndTheRepeats) {
  SKIP_WITHOUT_TORCH();
  const CliResult r = run_pipetwin(std::string("run ") + kScenario + " --repeat 2 --warmup 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("2 iterations, engine torch"));
  EXPECT_THAT(r.out, HasSubstr("warm-up         2 iterations run first"));
  EXPECT_THAT(r.out, HasSubstr("machine         2 ranks on "));
  EXPECT_THAT(r.out, HasSubstr("1 LibTorch thread per rank, one host thread per lane (compute"));
  EXPECT_THAT(r.out, HasSubstr("repeat          2 runs: median "));
  EXPECT_THAT(r.out, HasSubstr("makespans"));
}

// --pin: every rank on one core; the report says so and still counts the machine's cores.
TEST(RealRunNoise, PinnedRanksSayTheyArePinned) {
  SKIP_WITHOUT_TORCH();
  const CliResult r = run_pipetwin(std::string("run ") + kScenario + " --pin --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json machine = nlohmann::json::parse(r.out)["machine"];
  EXPECT_EQ(machine["pinned"], true);
  EXPECT_GE(machine["cores"].get<int>(), 1);
  const CliResult text = run_pipetwin(std::string("run ") + kScenario + " --pin");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr(", each pinned to one; "));
}

TEST(RealRunNoise, FreezingRunsRefuseAWarmup) {
  SKIP_WITHOUT_TORCH();
  const CliResult freezing =
      run_pipetwin(std::string("run ") + kScenario +
                   " --set 'freeze=at { iteration: 1 frozen_layers: 1 }' --warmup 2");
  EXPECT_EQ(freezing.exit_code, 2) << freezing.err;
  EXPECT_THAT(freezing.err, HasSubstr("--warmup 2: a FreezePipe run keeps every iteration"));
  const TempDir dir;
  const CliResult log = run_pipetwin(std::string("run ") + kScenario + " --warmup 1 --freeze-log " +
                                     (dir.path() / "log").string());
  EXPECT_EQ(log.exit_code, 2) << log.err;
  EXPECT_THAT(log.err, HasSubstr("--freeze-log records every iteration"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "log"));
}

TEST(RealRunNoise, RepeatNeedsTheLocalLauncher) {
  SKIP_WITHOUT_TORCH();
  const CliResult r = run_binary(std::string("RANK=0 WORLD_SIZE=2 ") + PIPETWIN_BINARY,
                                 std::string("run ") + kScenario + " --repeat 2 --timeout 3");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--repeat needs the local launcher"));
}

}  // namespace
}  // namespace pipetwin
