// `pipetwin simulate` end to end: the built-in scenarios, --set, --json and the trace.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "random_trials.h"
#include "shipped_scenarios.h"
#include "timeline_equality.h"
#include "traces/chrome_trace.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using ::testing::HasSubstr;
using testing::read_all;
using testing::run_pipetwin;
using testing::TempDir;

nlohmann::json simulate_json(const std::string& args) {
  const CliResult r = run_pipetwin("simulate " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// The links' load over time goes into the timeline only for a trace, a timeline file or a
// report; the summary is the same either way, and the written timeline has the counters.
TEST(SimulateCli, LinkCountersOnlyWhereSomethingDrawsThem) {
  TempDir dir;
  const std::string scenario =
      "builtin:quickstart --set cluster.gpus_per_node=8 --set training.data_parallel=2";
  const std::string timeline = (dir.path() / "run.timeline").string();
  const nlohmann::json with_file = simulate_json(scenario + " --timeline " + timeline);
  EXPECT_EQ(simulate_json(scenario), with_file);
  const Timeline written = read_timeline_file(timeline);
  EXPECT_TRUE(std::any_of(written.counters.begin(), written.counters.end(),
                          [](const Counter& c) { return c.link >= 0; }));
}

TEST(SimulateCli, QuickstartIsBuiltIn) {
  const CliResult r = run_pipetwin("simulate");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("quickstart: ONE_F_ONE_B, 4 stages"));
  EXPECT_THAT(r.out, HasSubstr("iteration time"));
  EXPECT_THAT(r.out, HasSubstr("throughput"));
}

TEST(SimulateCli, JsonHasTheContractFields) {
  const nlohmann::json j = simulate_json("");
  for (const char* key : {"iteration_time_s", "training_time_s", "throughput_samples_per_s",
                          "bubble_ratio", "devices"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  ASSERT_EQ(j["devices"].size(), 4u);
  for (const auto& d : j["devices"]) {
    EXPECT_TRUE(d.contains("id") && d.contains("busy_s") && d.contains("peak_memory_bytes"));
    EXPECT_GT(d["peak_memory_bytes"].get<double>(), 0);
  }
  EXPECT_DOUBLE_EQ(j["training_time_s"].get<double>(), 2 * j["iteration_time_s"].get<double>());
  EXPECT_NEAR(j["throughput_samples_per_s"].get<double>(), 32 / j["iteration_time_s"].get<double>(),
              1e-9);
}

TEST(SimulateCli, JsonReportsTheLinksThatCarriedTraffic) {
  const nlohmann::json j = simulate_json("--engine simgrid");
  ASSERT_FALSE(j["links"].empty());
  for (const auto& link : j["links"]) {
    EXPECT_GT(link["bytes"].get<double>(), 0);
    EXPECT_GT(link["busy_fraction"].get<double>(), 0);
    EXPECT_LE(link["busy_fraction"].get<double>(), 1);
  }
  // Stage 0 sends 8 microbatches' activations per iteration through its port, twice.
  bool found = false;
  for (const auto& link : j["links"]) found |= link["name"] == "nvswitch_port0/up";
  EXPECT_TRUE(found);
}

TEST(SimulateCli, EnginesAgreeWithoutContention) {
  const nlohmann::json analytic = simulate_json("");
  const nlohmann::json simgrid = simulate_json("--engine simgrid");
  EXPECT_EQ(simgrid["engine"], "simgrid");
  EXPECT_NEAR(simgrid["iteration_time_s"].get<double>(), analytic["iteration_time_s"].get<double>(),
              1e-9 * analytic["iteration_time_s"].get<double>());
}

TEST(SimulateCli, DeviceOverridesMakeAHeterogeneousCluster) {
  const TempDir dir;
  const auto path = dir.write("hetero.textproto", R"(
cluster { nodes: 1 gpus_per_node: 2 gpu { peak_tflops: 100 memory_gib: 80 }
          intra_node { bandwidth_gbytes_per_s: 100 }
          devices { id: 1 gpu { peak_tflops: 50 memory_gib: 40 } } }
model { zoo { name: "mlp" layers: 4 hidden: 1024 input_dim: 1024 output_dim: 1024 } }
training { global_batch: 64 microbatches: 8 }
schedule { kind: ONE_F_ONE_B stages: 2 partition: [2, 2] })");
  const nlohmann::json j = simulate_json(path.string());
  // Same FLOPs on both stages; gpu1 has half the FLOP/s and half the memory.
  EXPECT_NEAR(j["devices"][1]["busy_s"].get<double>(), 2 * j["devices"][0]["busy_s"].get<double>(),
              1e-12);
  EXPECT_EQ(j["devices"][1]["memory_capacity_bytes"].get<int64_t>(), int64_t{40} << 30);
}

TEST(SimulateCli, UniformScenarioMatchesTheClosedForm) {
  const nlohmann::json j =
      simulate_json(std::string(PIPETWIN_SOURCE_DIR) + "/scenarios/uniform.textproto");
  EXPECT_NEAR(j["iteration_time_s"].get<double>(), 0.027, 1e-12);
  EXPECT_NEAR(j["bubble_ratio"].get<double>(), 1.0 / 9, 1e-12);
}

TEST(SimulateCli, SetOverridesFields) {
  const std::string uniform = std::string(PIPETWIN_SOURCE_DIR) + "/scenarios/uniform.textproto";
  // Layer costs stay those of a 4-sample microbatch, so 16 microbatches of 2 samples
  // take half as long each: (16 + 1) * 1.5 ms.
  const nlohmann::json j = simulate_json(uniform +
                                         " --set training.microbatches=16"
                                         " --set schedule.kind=ONE_F_ONE_B");
  EXPECT_EQ(j["schedule"], "ONE_F_ONE_B");
  EXPECT_EQ(j["microbatches"], 16);
  EXPECT_NEAR(j["iteration_time_s"].get<double>(), 17 * 0.0015, 1e-12);
  const nlohmann::json k = simulate_json(uniform + " --set model.layers[1].fwd_ms=3");
  // GPipe, stage 1 now 3 ms forward: its forwards end at 1 + 8 * 3 = 25 ms, its
  // backwards at 25 + 8 * 2 = 41 ms, and stage 0's last backward at 43 ms.
  EXPECT_NEAR(k["iteration_time_s"].get<double>(), 0.043, 1e-12);
}

// One test per shipped scenario, so that the largest (2,048 and 1,536 GPUs) run beside the
// others rather than after them. Sanitized builds check the cluster-sized ones on one small
// replica, as they run a quarter of the random trials (random_trials.h): the code paths are
// the same at every scale, and the Release suite simulates every scenario whole.
class ShippedScenarioSimulates : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedScenarioSimulates, WithExitZero) {
  const bool shrink = (testing::kSanitized && testing::cluster_sized(GetParam())) ||
                      testing::benchmark_sized(GetParam());
  const CliResult r =
      run_pipetwin("simulate builtin:" + GetParam() + ".textproto --allow-oom --json" +
                   (shrink ? testing::one_small_replica(GetParam()) : ""));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

INSTANTIATE_TEST_SUITE_P(SimulateCli, ShippedScenarioSimulates,
                         ::testing::ValuesIn(testing::shipped_scenario_names()),
                         [](const auto& info) { return testing::scenario_test_name(info.param); });

TEST(SimulateCli, GpipeNeedsMoreMemoryThanOneFOneB) {
  const std::string dir = std::string(PIPETWIN_SOURCE_DIR) + "/scenarios/";
  const nlohmann::json gpipe = simulate_json(dir + "gpt-8gpu-gpipe.textproto --allow-oom");
  const nlohmann::json ofob = simulate_json(dir + "gpt-8gpu-1f1b.textproto");
  EXPECT_TRUE(gpipe["out_of_memory"].get<bool>());
  EXPECT_FALSE(ofob["out_of_memory"].get<bool>());
  EXPECT_NEAR(gpipe["iteration_time_s"].get<double>(), ofob["iteration_time_s"].get<double>(),
              0.02 * ofob["iteration_time_s"].get<double>());
  EXPECT_GT(gpipe["devices"][0]["peak_memory_bytes"].get<double>(),
            2 * ofob["devices"][0]["peak_memory_bytes"].get<double>());
}

class TraceOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_ = dir_.path() / "run.json";
    timeline_ = dir_.path() / "run.timeline";
    const CliResult r = run_pipetwin("simulate --set training.iterations=1 --trace " +
                                     trace_.string() + " --timeline " + timeline_.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  TempDir dir_;
  std::filesystem::path trace_, timeline_;
};

TEST_F(TraceOutput, ParsesAndHasOneForwardAndBackwardPerStageAndMicrobatch) {
  const nlohmann::json trace = nlohmann::json::parse(read_all(trace_));
  std::map<std::tuple<std::string, int, int>, int> compute;
  std::map<uint64_t, std::multiset<std::string>> flows;
  bool memory_counter = false, thread_names = false;
  for (const auto& e : trace["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "X" && e["cat"] == "compute" && e["args"]["op"] != "OPTIM") {
      EXPECT_TRUE(e["args"].contains("samples") && e["args"].contains("iteration"));
      ++compute[{e["args"]["op"], e["args"]["stage"], e["args"]["microbatch"]}];
    }
    if (ph == "s" || ph == "f") flows[e["id"].get<uint64_t>()].insert(ph);
    if (ph == "C") memory_counter = true;
    if (ph == "M" && e["name"] == "thread_name") thread_names = true;
  }
  EXPECT_EQ(compute.size(), 2u * 4 * 8);  // FWD and BWD x 4 stages x 8 microbatches
  for (const auto& [key, n] : compute) EXPECT_EQ(n, 1);
  EXPECT_EQ(flows.size(), 2u * 3 * 8);  // activations and gradients over 3 cuts
  for (const auto& [id, ends] : flows) EXPECT_EQ(ends, (std::multiset<std::string>{"f", "s"}));
  EXPECT_TRUE(memory_counter);
  EXPECT_TRUE(thread_names);
}

TEST_F(TraceOutput, ReadsBackToTheWrittenTimeline) {
  const Timeline saved = read_timeline_file(timeline_.string());
  const Timeline from_trace = read_chrome_trace(read_all(trace_));
  testing::expect_same_timeline(saved, from_trace);
  const TempDir other;
  const auto again = other.path() / "again.json";
  const CliResult r = run_pipetwin("trace " + timeline_.string() + " -o " + again.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_all(again), read_all(trace_));
}

TEST(TraceCli, UnreadableTimelineIsBadInput) {
  const TempDir dir;
  const auto garbage = dir.write("x.timeline", "not a timeline");
  const CliResult r =
      run_pipetwin("trace " + garbage.string() + " -o " + (dir.path() / "out.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(garbage.string()));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out.json"));
}

}  // namespace
}  // namespace pipetwin
