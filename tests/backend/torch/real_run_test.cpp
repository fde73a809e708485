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
#include "real_run_helpers.h"
#include "sim/model/model_sources.h"
#include "sim/scenario/freeze_log.h"
#include "sim/scenario/loaded_scenario.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::run_pipetwin;
using testing::TempDir;

using testing::expect_close;

constexpr const char* kScenario = "builtin:mlp-cpu-2rank";

class RealRun : public ::testing::TestWithParam<std::string> {};

nlohmann::json run_scenario_json(const std::string& args) {
  const CliResult r = run_pipetwin("run " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json{};
}

// Same seed, same data, gradients accumulated over the minibatch: the per-iteration losses
// and the trained weights of the pipeline equal those of one process without a pipeline.
TEST_P(RealRun, EqualsTheSingleProcessReference) {
  SKIP_WITHOUT_TORCH();
  const std::string args = GetParam() + " --set training.iterations=3";
  const nlohmann::json pipeline = run_scenario_json(args);
  const nlohmann::json reference = run_scenario_json(args + " --reference");
  ASSERT_FALSE(pipeline.empty());
  expect_close(pipeline["losses"], reference["losses"], 1e-6);
  expect_close(pipeline["layer_weight_sums"], reference["layer_weight_sums"], 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, RealRun,
    ::testing::Values(
        "builtin:mlp-cpu-2rank --set schedule.kind=GPIPE",
        "builtin:mlp-cpu-2rank --set schedule.kind=ONE_F_ONE_B",
        "builtin:mlp-cpu-2rank --set schedule.kind=ONE_F_ONE_B --set training.optimizer=SGD",
        // Blocking transfers: the compute lane waits for each send and receive.
        "builtin:mlp-cpu-2rank --set schedule.comm_overlap=false",
        // Unequal cuts: stage 1 cuts the batch differently from stage 0.
        "builtin:mlp-cpu-2rank --set schedule.kind=UMPIPE "
        "--set 'schedule.stage_plans[0]=forward_sizes: [8,24,32] backward_sizes: [8,24,32]' "
        "--set 'schedule.stage_plans[1]=forward_sizes: [16,16,16,16] "
        "backward_sizes: [16,16,16,16]'",
        // Backward cuts unlike the forward cuts: merged and split forwards.
        "builtin:mlp-cpu-2rank --set schedule.kind=UMPIPE "
        "--set 'schedule.stage_plans[0]=forward_sizes: [8,24,32] backward_sizes: [16,16,32]' "
        "--set 'schedule.stage_plans[1]=forward_sizes: [16,16,16,16] backward_sizes: [40,24]'",
        // Two model chunks per rank (Megatron interleaving).
        "builtin:mlp-cpu-2rank --set schedule.kind=INTERLEAVED_ONE_F_ONE_B "
        "--set schedule.virtual_stages=2",
        // Two replicas of the pipeline: ALLREDUCE of each stage's gradients over Gloo.
        "builtin:mlp-cpu-2rank --set training.data_parallel=2 --set cluster.gpus_per_node=4",
        "builtin:gpt-cpu-2rank --set schedule.kind=GPIPE",
        // PipeFB: forward and backward of each stage on two ranks; the backward rank
        // recomputes from the handed-over input, and weights travel back every iteration.
        "builtin:mlp-cpu-2rank --set schedule.kind=PIPEFB --set schedule.pipefb_recompute=true "
        "--set cluster.gpus_per_node=4",
        "builtin:gpt-cpu-2rank --set schedule.kind=PIPEFB --set schedule.pipefb_recompute=true "
        "--set cluster.gpus_per_node=4",
        "builtin:gpt-cpu-2rank --set training.data_parallel=2 --set cluster.gpus_per_node=4",
        "builtin:vgg16-cpu-2rank --set schedule.kind=ONE_F_ONE_B",
        "builtin:vgg16-cpu-2rank --set schedule.kind=UMPIPE "
        "--set 'schedule.stage_plans[0]=forward_sizes: [8,24] backward_sizes: [4,4,24]' "
        "--set 'schedule.stage_plans[1]=forward_sizes: [16,16] backward_sizes: [32]'",
        // BatchNorm normalises over the microbatch: the reference runs the same ones.
        "builtin:resnet18-cpu-2rank --set schedule.kind=ONE_F_ONE_B",
        "builtin:resnet18-cpu-2rank --set schedule.kind=GPIPE"),
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

class RealRunTraining : public ::testing::TestWithParam<std::string> {};

// Each zoo model learns the teacher's task: the mean loss of the last five iterations of
// twenty is clearly below that of the first five (fresh data every iteration, so this is
// learning, not memorising).
TEST_P(RealRunTraining, LossGoesDown) {
  SKIP_WITHOUT_TORCH();
  const nlohmann::json j = run_scenario_json(GetParam() + " --set training.iterations=20");
  ASSERT_FALSE(j.empty());
  const std::vector<double> losses = j["losses"];
  const double first = (losses[0] + losses[1] + losses[2] + losses[3] + losses[4]) / 5;
  const double last = (losses[15] + losses[16] + losses[17] + losses[18] + losses[19]) / 5;
  EXPECT_LT(last, 0.92 * first);
}

INSTANTIATE_TEST_SUITE_P(ZooModels, RealRunTraining,
                         ::testing::Values("builtin:mlp-cpu-2rank", "builtin:gpt-cpu-2rank",
                                           "builtin:vgg16-cpu-2rank", "builtin:resnet18-cpu-2rank",
                                           "builtin:moe-ep2-pp2-cpu"),
                         [](const auto& info) { return "case" + std::to_string(info.index); });

// The local ranks are forks of the launcher that reuse its loaded libraries; ranks that exec
// the binary afresh (PIPETWIN_RANKS_EXEC=1) train the same numbers.
TEST(RealRunLauncher, ForkedRanksTrainAsFreshProcessesDo) {
  SKIP_WITHOUT_TORCH();
  const std::string args = std::string(kScenario) + " --set training.iterations=2";
  const nlohmann::json forked = run_scenario_json(args);
  ::setenv("PIPETWIN_RANKS_EXEC", "1", 1);
  const nlohmann::json fresh = run_scenario_json(args);
  ::unsetenv("PIPETWIN_RANKS_EXEC");
  ASSERT_FALSE(forked.empty());
  ASSERT_FALSE(fresh.empty());
  expect_close(forked["losses"], fresh["losses"], 1e-12);
  expect_close(forked["layer_weight_sums"], fresh["layer_weight_sums"], 1e-12);
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

// No process of a run named `name` is left.
void expect_no_rank_left(const std::string& name) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string cmdline = testing::read_all(entry.path() / "cmdline");
    EXPECT_EQ(cmdline.find(name), std::string::npos) << entry.path();
  }
}

// A fault injected into rank 1 of a 3-iteration run with a 5 s timeout: the result and its
// wall time.
struct FaultyRun {
  CliResult result;
  double seconds = 0;
};
FaultyRun run_with_fault(const char* variable, const std::string& name,
                         const std::string& extra = "") {
  const auto started = std::chrono::steady_clock::now();
  ::setenv(variable, "1:5", 1);
  FaultyRun run;
  run.result = run_pipetwin("run " + std::string(kScenario) +
                            " --set training.iterations=3 --timeout 5 --set name=" + name + extra);
  ::unsetenv(variable);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return run;
}

// A rank that stops (SIGSTOP) and never continues: the run ends once it has been stopped for
// the timeout, naming it, and the stopped rank is not left behind.
TEST(RealRunFaults, AStalledRankFailsTheRunWithinTheTimeout) {
  SKIP_WITHOUT_TORCH();
  const FaultyRun run = run_with_fault("PIPETWIN_STALL_AT", "stall-test");
  EXPECT_EQ(run.result.exit_code, 1);
  EXPECT_THAT(run.result.err, HasSubstr("rank 1 stalled: stopped by a signal for more than the 5 s "
                                        "timeout"));
  EXPECT_LT(run.seconds, 30);  // the timeout, the launcher's grace and the start
  expect_no_rank_left("stall-test");
}

// A rank whose connections are shut down: both ranks fail on the closed connection, within
// the timeout, and the run says which rank failed and on what. Gloo reads the shutdown as a
// close, or as a reset when data was still in flight (seen under AddressSanitizer).
TEST(RealRunFaults, APeerWhoseSocketsCloseFailsTheRun) {
  SKIP_WITHOUT_TORCH();
  const FaultyRun run = run_with_fault("PIPETWIN_CLOSE_SOCKETS_AT", "socket-test");
  EXPECT_EQ(run.result.exit_code, 1);
  EXPECT_THAT(run.result.err,
              ::testing::ContainsRegex("rank [01] failed at .*Connection (closed|reset)"));
  EXPECT_LT(run.seconds, 30);
  expect_no_rank_left("socket-test");
}

// The disk fills while the timeline is written: the run fails naming the file and the cause,
// and leaves neither the file nor its temporary. (The temporary is a link to /dev/full,
// where every write fails with ENOSPC.)
TEST(RealRunFaults, AFullDiskLeavesNoPartialTimeline) {
  SKIP_WITHOUT_TORCH();
  TempDir dir;
  const std::filesystem::path timeline = dir.path() / "run.timeline";
  std::filesystem::create_symlink("/dev/full", dir.path() / "run.timeline.tmp");
  const CliResult r = run_pipetwin("run " + std::string(kScenario) +
                                   " --set training.iterations=2 --timeout 10 --set name=disk-test"
                                   " --timeline " +
                                   timeline.string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("writing '" + timeline.string() +
                               "' failed: No space left on device; nothing was written"));
  EXPECT_FALSE(std::filesystem::exists(timeline));
  EXPECT_FALSE(
      std::filesystem::exists(std::filesystem::symlink_status(dir.path() / "run.timeline.tmp")));
  expect_no_rank_left("disk-test");
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
  EXPECT_THAT(text, HasSubstr("partition: [2, 2]"));  // the placement is written out
  EXPECT_THAT(text, HasSubstr("zoo {"));              // and the architecture, for run
  // --alone: the micro-benchmarks only, the link as a run loads it.
  const auto alone = (dir.path() / "alone.textproto").string();
  const CliResult a =
      run_pipetwin("calibrate " + profiled + " --sizes 4096,65536,1048576 --alone -o " + alone);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_THAT(a.err, HasSubstr("fit alone: "));
  EXPECT_THAT(a.err, HasSubstr("fit under load: "));
  EXPECT_THAT(testing::read_all(alone), HasSubstr("while every rank computes"));
  EXPECT_THAT(testing::read_all(alone), Not(HasSubstr("interference {")));
  // The default: then a short run of the scenario, which the scenario is fitted to (what a
  // run adds: interference and dispatch gaps), keeping the scenario's own iterations.
  const CliResult c =
      run_pipetwin("calibrate " + profiled +
                   " --sizes 4096,65536,1048576 --run-iterations 2 --runs 1 -o " + calibrated);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_THAT(c.err, HasSubstr("1 run of 2 iterations (each after one warm-up)"));
  const std::string fitted = testing::read_all(calibrated);
  EXPECT_THAT(fitted, HasSubstr("then 1 run of 2 iterations that the scenario is fitted to"));
  // A second microbatch size, run after each run of the scenario's own, joins the fit.
  EXPECT_THAT(fitted, HasSubstr("each followed by one with 4 microbatches of twice the size"));
  EXPECT_THAT(fitted, HasSubstr("resized0.timeline, a run at another microbatch size"));
  for (const char* field : {"interference {", "dispatch {", "intra_node {"}) {
    EXPECT_THAT(fitted, HasSubstr(field));
  }
  EXPECT_THAT(fitted, HasSubstr("iterations: 20"));
  const CliResult s = run_pipetwin("simulate " + calibrated + " --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const nlohmann::json j = nlohmann::json::parse(s.out);
  EXPECT_GT(j["iteration_time_s"].get<double>(), 0);
  EXPECT_EQ(j["stages"], 2);
}

// Tensor and expert parallelism run their collectives inside the passes on real ranks:
// calibrate fits the passes without them and keeps the zoo's structure, so the fitted
// scenario splits and exchanges as the zoo's does.
TEST(RealRunMeasure, TensorAndExpertParallelScenariosCalibrate) {
  SKIP_WITHOUT_TORCH();
  const TempDir dir;
  // From the source tree: the MoE scenario reads its config.json beside it.
  const auto folder = std::filesystem::path(PIPETWIN_SOURCE_DIR) / "scenarios";
  for (const char* name : {"gpt-tp2-pp2-cpu.textproto", "moe-ep2-pp2-cpu.textproto"}) {
    SCOPED_TRACE(name);
    const std::string scenario = (folder / name).string();
    const auto calibrated = (dir.path() / "calibrated.textproto").string();
    const CliResult c =
        run_pipetwin("calibrate " + scenario +
                     " --sizes 4096,65536 --run-iterations 2 --runs 1 -o " + calibrated);
    ASSERT_EQ(c.exit_code, 0) << c.err;
    const std::string fitted = testing::read_all(calibrated);
    EXPECT_THAT(fitted, HasSubstr("zoo {"));
    EXPECT_THAT(fitted, HasSubstr("layers {"));  // the measured costs beside it
    const CliResult s = run_pipetwin("simulate " + calibrated + " --json");
    ASSERT_EQ(s.exit_code, 0) << s.err;
    EXPECT_GT(nlohmann::json::parse(s.out)["iteration_time_s"].get<double>(), 0);
  }
}

// The loop a user closes: run, fit the scenario to the run, simulate and run the fitted
// scenario (its zoo block runs, its measured layers cost), then plan on it and run the plan.
TEST(RealRunMeasure, CalibrateFromARunWritesAScenarioThatSimulatesAndRuns) {
  SKIP_WITHOUT_TORCH();
  const TempDir dir;
  const auto measured = (dir.path() / "measured.timeline").string();
  const auto fitted = (dir.path() / "fitted.textproto").string();
  const auto plan = (dir.path() / "plan.textproto").string();
  const std::string small = " --set training.iterations=3";
  const CliResult r =
      run_pipetwin(std::string("run ") + kScenario + small + " --timeline " + measured);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const CliResult c = run_pipetwin(std::string("calibrate ") + kScenario + small + " --from " +
                                   measured + " -o " + fitted);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_THAT(c.err, HasSubstr("fitted scenario written to"));
  const std::string text = testing::read_all(fitted);
  for (const char* field : {"zoo {", "layers {", "interference {", "dispatch {", "partition:"}) {
    EXPECT_THAT(text, HasSubstr(field));
  }
  // The fitted scenario simulates the run it was fitted on: the wake-up gap is set so that
  // the makespan matches, unless the fitted costs alone already take longer than the run
  // (a loaded machine can make one run that fast), where the gap stops at zero.
  const CliResult s = run_pipetwin("simulate " + fitted + " --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const double measured_s = nlohmann::json::parse(
      run_pipetwin("compare " + measured + " " + measured + " --json").out)["makespan_a_s"];
  const double ratio = nlohmann::json::parse(s.out)["training_time_s"].get<double>() / measured_s;
  if (text.find("wakeup_us: 0\n") != std::string::npos) {
    EXPECT_GE(ratio, 1 - 0.01) << "the gap stopped at zero with the simulation still short";
  } else {
    EXPECT_NEAR(ratio, 1.0, 0.01);
  }
  const CliResult again = run_pipetwin("run " + fitted + " --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const CliResult p = run_pipetwin("plan " + fitted + " --search umpipe --population 16 " +
                                   "--generations 3 --write-plan " + plan);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("<- the plan to run"));
  const CliResult ran = run_pipetwin("run " + plan + " --json");
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
}

TEST(RealRunMeasure, CalibrateFromATimelineOfAnotherScenarioSaysWhich) {
  SKIP_WITHOUT_TORCH();
  const TempDir dir;
  const auto measured = (dir.path() / "measured.timeline").string();
  ASSERT_EQ(run_pipetwin("simulate builtin:quickstart --timeline " + measured).exit_code, 0);
  const CliResult c = run_pipetwin(std::string("calibrate ") + kScenario + " --from " + measured);
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_THAT(c.err, HasSubstr(measured));
}

class RealRunModules : public ::testing::TestWithParam<std::string> {};

// The modules that run are the model the simulators cost: every layer's parameter bytes,
// counted by `pipetwin profile` from the LibTorch modules, equal the zoo's formulas.
TEST_P(RealRunModules, HaveTheParametersTheCostModelCounts) {
  SKIP_WITHOUT_TORCH();
  const TempDir dir;
  const auto profiled = (dir.path() / "profiled.textproto").string();
  const CliResult p =
      run_pipetwin("profile " + GetParam() + " --batches 1 --repeats 1 -o " + profiled);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const proto::Scenario measured = load_scenario(profiled, {}).scenario;
  const proto::Scenario original = load_scenario(GetParam(), {}).scenario;
  const ModelSpec costed = model_from_zoo(original.model().zoo());
  ASSERT_EQ(measured.model().layers_size(), static_cast<int>(costed.layers.size()));
  for (int l = 0; l < measured.model().layers_size(); ++l) {
    EXPECT_EQ(measured.model().layers(l).parameter_bytes(), costed.layers[l].parameter_bytes)
        << costed.layers[l].name;
  }
}

INSTANTIATE_TEST_SUITE_P(ZooModels, RealRunModules,
                         ::testing::Values("builtin:mlp-cpu-2rank", "builtin:gpt-cpu-2rank",
                                           "builtin:vgg16-cpu-2rank", "builtin:resnet18-cpu-2rank",
                                           "builtin:moe-ep2-pp2-cpu"),
                         [](const auto& info) { return "case" + std::to_string(info.index); });

// On CPU the backend counts the activation tensors each forward's layers produced (what
// autograd keeps): for the MLP they equal the cost model's stash bytes exactly. The peaks
// depend on when gradients arrive relative to the ends of backwards, a race between
// similar durations, so they are only checked against what any timing gives: under GPipe,
// stage 0 holds every microbatch's stash at once.
TEST(RealRunMemory, MeasuredStashEqualsTheModelForAnMlp) {
  SKIP_WITHOUT_TORCH();
  const std::string sets = " --set schedule.kind=GPIPE --set training.iterations=1 --json";
  const nlohmann::json run = run_scenario_json("builtin:mlp-cpu-2rank" + sets);
  ASSERT_FALSE(run.empty());
  ASSERT_EQ(run["stash_bytes_per_sample"].size(), 2u);
  for (const auto& stage : run["stash_bytes_per_sample"]) {
    EXPECT_GT(stage["measured"].get<double>(), 0);
    EXPECT_EQ(stage["measured"].get<double>(), stage["model"].get<double>()) << stage.dump();
  }
  const CliResult sim = run_pipetwin("simulate builtin:mlp-cpu-2rank" + sets);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const nlohmann::json simulated = nlohmann::json::parse(sim.out);
  const double all_stashes = 64 * run["stash_bytes_per_sample"][0]["measured"].get<double>();
  EXPECT_GE(run["devices"][0]["peak_memory_bytes"].get<double>(), all_stashes);
  EXPECT_GE(simulated["devices"][0]["peak_memory_bytes"].get<double>(), all_stashes);
}

// A real run records each layer's gradient L1 norm per interval as a freeze log, and a
// simulated FreezePipe run reads it (freeze { log }).
TEST(RealRunFreezeLog, ARealRunWritesTheLogASimulatedRunReads) {
  SKIP_WITHOUT_TORCH();
  const TempDir dir;
  const auto log_path = (dir.path() / "run.freezelog").string();
  const CliResult r = run_pipetwin(
      "run builtin:mlp-cpu-2rank --set training.iterations=30 --freeze-log " + log_path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const FreezeLog log = parse_freeze_log(testing::read_all(log_path), log_path, 4);
  EXPECT_EQ(log.interval_iterations, 10);
  ASSERT_EQ(log.norms.size(), 3u);
  for (const auto& interval : log.norms) {
    for (double norm : interval) EXPECT_GT(norm, 0);
  }
  const std::string scenario =
      "cluster { preset: \"cpu-host\" gpus_per_node: 2 }\n"
      "model { zoo { name: \"mlp\" layers: 4 hidden: 512 input_dim: 256 output_dim: 32 } }\n"
      "training { global_batch: 64 microbatches: 8 iterations: 30 }\n"
      "schedule { kind: GPIPE stages: 2 }\n"
      "freeze { log: \"run.freezelog\" percentile: 90 max_fraction_per_step: 0.5 }\n";
  const std::string path = dir.write("frozen.textproto", scenario).string();
  const CliResult sim = run_pipetwin("simulate " + path + " --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_GT(nlohmann::json::parse(sim.out)["training_time_s"].get<double>(), 0);
}

}  // namespace
}  // namespace pipetwin
