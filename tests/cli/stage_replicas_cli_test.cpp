// schedule.stage_replicas from the command line: what the resolver refuses (exit 2, the
// field named at its line), and what simulate reports for a replicated scenario.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

const std::string kHead = R"(name: "replicas"
cluster { nodes: 1 gpus_per_node: 4 gpu { name: "g" peak_tflops: 100 memory_gib: 80 }
  intra_node { bandwidth_gbytes_per_s: 100 latency_us: 1 } }
model { layers { name: "a" fwd_ms: 1 bwd_ms: 2 parameter_bytes: 4000 activation_bytes: 400 }
        layers { name: "b" fwd_ms: 2 bwd_ms: 4 parameter_bytes: 4000 } layer_batch: 4 }
)";

TEST(StageReplicasCli, BadInputExitsTwoNamingTheField) {
  const testing::TempDir dir;
  const struct {
    std::string rest, field, problem;
  } cases[] = {
      {"training { global_batch: 16 microbatches: 4 }\n"
       "schedule { kind: PIPEDREAM_ASYNC stages: 2 stage_replicas: [1, 2, 1] }",
       "replicas.textproto:7: schedule.stage_replicas", "expected one per stage (2)"},
      {"training { global_batch: 16 microbatches: 4 }\n"
       "schedule { kind: PIPEDREAM_ASYNC stages: 2 stage_replicas: [1, 0] }",
       "schedule.stage_replicas[1]", "must be positive"},
      {"training { global_batch: 16 microbatches: 4 }\n"
       "schedule { kind: PIPEDREAM_ASYNC stages: 2 stage_replicas: [2, 3] }",
       "schedule.stage_replicas", "more than the cluster's 4"},
      {"training { global_batch: 16 microbatches: 2 }\n"
       "schedule { kind: ONE_F_ONE_B stages: 2 stage_replicas: [1, 3] }",
       "schedule.stage_replicas[1]", "at least as many microbatches"},
      {"training { global_batch: 16 microbatches: 4 data_parallel: 2 }\n"
       "schedule { kind: PIPEDREAM_ASYNC stages: 2 stage_replicas: [1, 2] }",
       "schedule.stage_replicas", "training.data_parallel"},
      {"training { global_batch: 16 microbatches: 4 tensor_parallel: 2 }\n"
       "schedule { kind: ONE_F_ONE_B stages: 2 stage_replicas: [1, 2] }",
       "schedule.stage_replicas", "training.tensor_parallel"},
      {"training { global_batch: 16 microbatches: 4 }\n"
       "schedule { kind: PIPEFB stages: 2 stage_replicas: [1, 2] }",
       "schedule.stage_replicas", "not PIPEFB"},
      {"training { global_batch: 16 microbatches: 4 }\n"
       "schedule { kind: INTERLEAVED_ONE_F_ONE_B stages: 2 stage_replicas: [1, 2] }",
       "schedule.stage_replicas", "not INTERLEAVED_ONE_F_ONE_B"},
      {"training { global_batch: 16 microbatches: 4 }\n"
       "schedule { kind: ONE_F_ONE_B stages: 2 stage_replicas: [1, 2] offload { policy: ALL } }",
       "schedule.stage_replicas", "schedule.offload"},
      {"training { global_batch: 16 microbatches: 4 iterations: 20 }\n"
       "schedule { kind: ONE_F_ONE_B stages: 2 stage_replicas: [1, 2] }\n"
       "freeze { at { iteration: 10 frozen_layers: 1 } }",
       "schedule.stage_replicas", "freeze"},
  };
  for (const auto& c : cases) {
    const std::string path = dir.write("replicas.textproto", kHead + c.rest + "\n").string();
    const testing::CliResult r = testing::run_pipetwin("simulate " + path);
    EXPECT_EQ(r.exit_code, 2) << c.rest << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.field)) << c.rest;
    EXPECT_THAT(r.err, HasSubstr(c.problem)) << c.rest;
  }
  // A --set names itself.
  const std::string path =
      dir.write("replicas.textproto", kHead +
                                          "training { global_batch: 16 microbatches: 4 }\n"
                                          "schedule { kind: ONE_F_ONE_B stages: 2 }\n")
          .string();
  const testing::CliResult r =
      testing::run_pipetwin("simulate " + path + " --set schedule.stage_replicas=[1,5]");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--set schedule.stage_replicas=[1,5]")) << r.err;
}

// Both engines run a replicated scenario; the report names each device's stage and
// replica and echoes stage_replicas, and the trace carries the names.
TEST(StageReplicasCli, SimulateReportsEachReplica) {
  const testing::TempDir dir;
  const std::string path =
      dir.write("replicas.textproto", kHead +
                                          "training { global_batch: 16 microbatches: 4 "
                                          "iterations: 3 }\n"
                                          "schedule { kind: PIPEDREAM_ASYNC stages: 2 "
                                          "stage_replicas: [1, 2] }\n")
          .string();
  for (const std::string engine : {"analytic", "simgrid"}) {
    const testing::CliResult r =
        testing::run_pipetwin("simulate " + path + " --engine " + engine + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json report = nlohmann::json::parse(r.out);
    EXPECT_EQ(report["stage_replicas"], nlohmann::json::array({1, 2}));
    ASSERT_EQ(report["devices"].size(), 3u);
    EXPECT_EQ(report["devices"][2]["name"], "gpu2 (stage 1 replica 1)");
    EXPECT_GT(report["devices"][2]["peak_memory_bytes"].get<double>(), 0);
    EXPECT_GT(report["steady_state_iteration_s"].get<double>(), 0);
  }
  const std::string trace = (dir.path() / "trace.json").string();
  const testing::CliResult table = testing::run_pipetwin("simulate " + path + " --trace " + trace);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("stage replicas 1,2"));
  EXPECT_THAT(table.out, HasSubstr("gpu1 (stage 1 replica 0)"));
  EXPECT_THAT(testing::read_all(trace), HasSubstr("gpu2 (stage 1 replica 1)"));
}

}  // namespace
}  // namespace pipetwin
