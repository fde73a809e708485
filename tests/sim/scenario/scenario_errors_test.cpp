// Bad input: every error exits 2 (runtime failures 1) and names the file, the line
// and the field; no partial output file is left behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli_runner.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using ::testing::HasSubstr;
using testing::run_pipetwin;
using testing::TempDir;

// The issue's minimal scenario, line by line so tests can break one line.
const char* kUniform = R"(name: "uniform"
cluster {
  nodes: 1
  gpus_per_node: 4
  gpu { name: "test" peak_tflops: 100 memory_gib: 80 }
  intra_node { bandwidth_gbytes_per_s: 100 latency_us: 0 }
  inter_node { bandwidth_gbytes_per_s: 25 latency_us: 5 }
  host_link  { bandwidth_gbytes_per_s: 25 latency_us: 2 }
}
model {
  layers { name: "l0" fwd_ms: 1.0 bwd_ms: 2.0 activation_bytes: 0 parameter_bytes: 0 }
  layers { name: "l1" fwd_ms: 1.0 bwd_ms: 2.0 activation_bytes: 0 parameter_bytes: 0 }
}
training { global_batch: 32 microbatches: 8 iterations: 1 }
schedule { kind: GPIPE stages: 2 }
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

class ScenarioErrors : public ::testing::Test {
 protected:
  CliResult simulate(const std::string& scenario, const std::string& extra = "") {
    path_ = dir_.write("bad.textproto", scenario);
    return run_pipetwin("simulate " + path_.string() + " " + extra);
  }
  void expect_input_error(const CliResult& r, const std::string& line, const std::string& field,
                          const std::string& problem) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(path_.string() + ":" + line));
    EXPECT_THAT(r.err, HasSubstr(field));
    EXPECT_THAT(r.err, HasSubstr(problem));
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // Exit 2 naming `field`, blamed on the --set that gave the value or on the section's line.
  static void expect_refused(const CliResult& r, const std::string& field,
                             const std::string& problem) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(field + ": "));
    EXPECT_THAT(r.err, HasSubstr(problem));
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  TempDir dir_;
  std::filesystem::path path_;
};

TEST_F(ScenarioErrors, ValidScenarioRuns) {
  const CliResult r = simulate(kUniform, "--json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"iteration_time_s\""));
}

TEST_F(ScenarioErrors, UnknownField) {
  expect_input_error(simulate(replace(kUniform, "stages: 2", "stagez: 2")), "15", "stagez",
                     "no field named");
}

TEST_F(ScenarioErrors, WrongType) {
  expect_input_error(simulate(replace(kUniform, "global_batch: 32", "global_batch: \"many\"")),
                     "14", "global_batch", "integer");
}

TEST_F(ScenarioErrors, NegativeSize) {
  expect_input_error(simulate(replace(kUniform, "fwd_ms: 1.0", "fwd_ms: -1.0")), "11",
                     "model.layers[0].fwd_ms", "must not be negative");
}

TEST_F(ScenarioErrors, ZeroSize) {
  expect_input_error(simulate(replace(kUniform, "global_batch: 32", "global_batch: 0")), "14",
                     "training.global_batch", "must be positive");
}

TEST_F(ScenarioErrors, ZeroBandwidth) {
  expect_input_error(
      simulate(replace(kUniform, "bandwidth_gbytes_per_s: 100", "bandwidth_gbytes_per_s: 0")), "6",
      "cluster.intra_node.bandwidth_gbytes_per_s", "must be positive");
}

TEST_F(ScenarioErrors, MoreStagesThanLayers) {
  expect_input_error(simulate(replace(kUniform, "stages: 2", "stages: 3")), "15", "schedule.stages",
                     "more layers than the model's 2");
}

TEST_F(ScenarioErrors, MoreStagesThanDevices) {
  std::string many_layers = kUniform;
  for (int i = 0; i < 6; ++i) {
    many_layers = replace(many_layers, "model {\n", "model {\n  layers { fwd_ms: 1 bwd_ms: 2 }\n");
  }
  path_ = dir_.write("bad.textproto", replace(many_layers, "stages: 2", "stages: 5"));
  const CliResult r = run_pipetwin("simulate " + path_.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("schedule.stages: 5 stages need more devices than the cluster's 4"));
}

TEST_F(ScenarioErrors, ZeroStageWithASchedulePipetwinCannotShard) {
  expect_input_error(
      simulate(replace(replace(kUniform, "iterations: 1", "iterations: 1 zero_stage: FSDP"),
                       "kind: GPIPE", "kind: PIPEDREAM_2BW")),
      "14", "training.zero_stage", "not with asynchronous pipelines");
  expect_input_error(simulate(replace(kUniform, "iterations: 1", "iterations: 1 zero_stage: 4")),
                     "14", "zero_stage", "");
}

TEST_F(ScenarioErrors, GradientBucketsOfANegativeSize) {
  expect_input_error(
      simulate(replace(kUniform, "iterations: 1", "iterations: 1 grad_bucket_mb: -1")), "14",
      "training.grad_bucket_mb", "must be between 0");
}

TEST_F(ScenarioErrors, ReductionsAfterTheFlushNeedOneBlockAndAFlush) {
  expect_input_error(
      simulate(replace(kUniform, "iterations: 1", "iterations: 1 grad_reduce_after_flush: true")),
      "14", "training.grad_reduce_after_flush", "training.grad_bucket_mb 0");
  expect_input_error(
      simulate(replace(replace(kUniform, "iterations: 1",
                               "iterations: 1 grad_bucket_mb: 0 grad_reduce_after_flush: true"),
                       "kind: GPIPE", "kind: PIPEDREAM_2BW")),
      "14", "training.grad_reduce_after_flush", "asynchronous pipelines");
}

// A GPT whose sequences of 1024 tokens and 16 heads context parallelism must split.
const char* kLongContext = R"(name: "cp"
cluster { preset: "dgx-h100" nodes: 2 }
model { zoo { name: "gpt" layers: 4 hidden: 1024 seq_len: 1024 heads: 16 vocab: 1000 } }
training { global_batch: 8 microbatches: 4 tensor_parallel: 2 context_parallel: 4 }
schedule { kind: ONE_F_ONE_B stages: 2 }
)";

TEST_F(ScenarioErrors, ContextParallelismThatDoesNotSplit) {
  EXPECT_EQ(simulate(kLongContext).exit_code, 0);
  expect_input_error(simulate(replace(kLongContext, "seq_len: 1024", "seq_len: 1028")), "4",
                     "training.context_parallel", "into 8 equal chunks");
  expect_input_error(simulate(replace(kLongContext, "context_parallel: 4",
                                      "context_parallel: 4 context_parallel_algorithm: ULYSSES"),
                              "--set model.zoo.heads=4"),
                     "4", "training.context_parallel_algorithm", "must divide the 4 heads");
  expect_input_error(simulate(replace(kLongContext, "kind: ONE_F_ONE_B", "kind: PIPEDREAM_2BW")),
                     "4", "training.context_parallel", "not with asynchronous pipelines");
  expect_input_error(simulate(replace(kLongContext, "context_parallel: 4", "context_parallel: 0")),
                     "4", "training.context_parallel", "");
  expect_input_error(
      simulate(replace(kUniform, "iterations: 1", "iterations: 1 context_parallel: 2")), "14",
      "training.context_parallel", "needs a zoo transformer or gpt");
}

// A small mixture of experts on 16 GPUs: TP 2 x DP 8, 8 experts.
const char* kExperts = R"(name: "moe"
cluster { preset: "dgx-h100" nodes: 2 }
model { zoo { name: "transformer" layers: 2 hidden: 512 heads: 8 ffn_hidden: 1024 seq_len: 256
              vocab: 1000 moe { experts: 8 top_k: 2 expert_ffn_hidden: 512 } } }
training { global_batch: 16 microbatches: 2 data_parallel: 8 tensor_parallel: 2 expert_parallel: 4 }
schedule { kind: ONE_F_ONE_B stages: 1 }
)";

TEST_F(ScenarioErrors, ExpertFoldingThatDoesNotTileTheGpus) {
  EXPECT_EQ(simulate(kExperts).exit_code, 0);
  EXPECT_EQ(simulate(kExperts, "--set training.expert_tensor_parallel=1").exit_code, 0);
  EXPECT_EQ(simulate(kExperts,
                     "--set training.expert_tensor_parallel=1 --set "
                     "training.expert_parallel=8")
                .exit_code,
            0);
  expect_refused(simulate(kExperts, "--set training.expert_tensor_parallel=4"),
                 "training.expert_tensor_parallel", "4 is neither");
  // 16 x 2 GPUs per expert group do not divide the stage's 16.
  expect_refused(
      simulate(replace(kExperts, "experts: 8", "experts: 16"), "--set training.expert_parallel=16"),
      "training.expert_parallel", "must divide the 16 GPUs");
  // 1 x 1 would be an expert group inside the tensor-parallel pair: with one expert group
  // the experts split like the MLP.
  EXPECT_EQ(simulate(kExperts,
                     "--set training.expert_tensor_parallel=1 --set "
                     "training.expert_parallel=1")
                .exit_code,
            0);
  // 2 x 1 with context parallelism 2: an expert group inside a replica's 4 GPUs, the
  // tensor-parallel pair of each context rank.
  EXPECT_EQ(simulate(kExperts,
                     "--set training.expert_tensor_parallel=1 --set "
                     "training.expert_parallel=2 --set training.context_parallel=2 "
                     "--set training.data_parallel=4")
                .exit_code,
            0);
  // 6 x 1 over TP 4 x DP 3: each group would take one replica's 4 tensor ranks and half of
  // the next one's.
  expect_refused(simulate(replace(replace(kExperts, "experts: 8", "experts: 12"),
                                  "global_batch: 16", "global_batch: 24"),
                          "--set training.tensor_parallel=4 --set training.data_parallel=3 "
                          "--set training.expert_tensor_parallel=1 --set "
                          "training.expert_parallel=6"),
                 "training.expert_parallel", "must tile the 4 x 1");
  expect_input_error(simulate(replace(kExperts, "expert_parallel: 4",
                                      "expert_parallel: 4 overlap_moe_expert_parallel_comm: true"),
                              "--set schedule.kind=GPIPE"),
                     "5", "training.overlap_moe_expert_parallel_comm", "ONE_F_ONE_B");
}

TEST_F(ScenarioErrors, MicrobatchesLargerThanBatch) {
  expect_input_error(simulate(replace(kUniform, "microbatches: 8", "microbatches: 33")), "14",
                     "training.microbatches", "cannot split a batch of 32");
}

TEST_F(ScenarioErrors, MissingProfileFile) {
  const std::string scenario = replace(
      kUniform,
      "  layers { name: \"l0\" fwd_ms: 1.0 bwd_ms: 2.0 activation_bytes: 0 parameter_bytes: 0 }\n"
      "  layers { name: \"l1\" fwd_ms: 1.0 bwd_ms: 2.0 activation_bytes: 0 parameter_bytes: 0 }\n",
      "  pipedream_profile: \"no/such/graph.txt\"\n  profile_batch: 32\n");
  expect_input_error(simulate(scenario), "11", "model.pipedream_profile", "cannot read file");
}

TEST_F(ScenarioErrors, MalformedText) {
  expect_input_error(simulate(replace(kUniform, "schedule {", "schedule ")), "15", "", "Expected");
}

TEST_F(ScenarioErrors, MissingRequiredField) {
  expect_input_error(simulate(replace(kUniform, "microbatches: 8 ", "")), "14",
                     "training.microbatches", "missing");
}

TEST_F(ScenarioErrors, UnknownPreset) {
  expect_input_error(simulate(replace(kUniform, "nodes: 1", "preset: \"dgx-z9\"")), "3",
                     "cluster.preset", "unknown preset 'dgx-z9'");
}

TEST_F(ScenarioErrors, BadOverridePath) {
  const CliResult r = simulate(kUniform, "--set schedule.knd=GPIPE");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--set schedule.knd=GPIPE: no field 'knd'"));
}

TEST_F(ScenarioErrors, BadOverrideValue) {
  const CliResult r = simulate(kUniform, "--set schedule.kind=ZERO_BUBBLE");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("one of GPIPE ONE_F_ONE_B INTERLEAVED_ONE_F_ONE_B"));
}

TEST_F(ScenarioErrors, OverrideBlamedForItsValue) {
  const CliResult r = simulate(kUniform, "--set training.microbatches=0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err,
              HasSubstr("--set training.microbatches=0: training.microbatches: must be positive"));
}

TEST_F(ScenarioErrors, MissingScenarioFile) {
  const CliResult r = run_pipetwin("simulate /no/such/file.textproto");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("/no/such/file.textproto: cannot read scenario file"));
}

TEST_F(ScenarioErrors, UmpipeSizesMustSumToTheBatch) {
  const std::string umpipe =
      replace(kUniform, "schedule { kind: GPIPE stages: 2 }",
              "schedule { kind: UMPIPE stages: 2\n"
              "  stage_plans { forward_sizes: [16, 16] backward_sizes: [32] }\n"
              "  stage_plans { forward_sizes: [8, 8, 8] backward_sizes: [32] } }");
  expect_input_error(simulate(umpipe), "17", "schedule.stage_plans[1].forward_sizes",
                     "sizes sum to 24, not the batch of 32");
}

TEST_F(ScenarioErrors, UmpipeSizesMustBePositive) {
  const std::string umpipe =
      replace(kUniform, "schedule { kind: GPIPE stages: 2 }",
              "schedule { kind: UMPIPE stages: 2\n"
              "  stage_plans { forward_sizes: [32, 0] backward_sizes: [32] }\n"
              "  stage_plans { forward_sizes: [32] backward_sizes: [32] } }");
  expect_input_error(simulate(umpipe), "16", "schedule.stage_plans[0].forward_sizes[1]",
                     "must be positive");
}

TEST_F(ScenarioErrors, UmpipeNeedsAPlanPerStage) {
  const std::string umpipe = replace(kUniform, "kind: GPIPE", "kind: UMPIPE");
  expect_input_error(simulate(umpipe), "15", "schedule.stage_plans",
                     "has 0 entries, expected one per stage (2)");
}

TEST_F(ScenarioErrors, OutOfMemoryIsARuntimeFailureAndLeavesNoTrace) {
  const std::string big = replace(kUniform, "activation_bytes: 0 parameter_bytes: 0 }\n  layers",
                                  "activation_bytes: 20000000000 parameter_bytes: 0 }\n  layers");
  const auto trace = dir_.path() / "trace.json";
  const CliResult r = simulate(big, "--trace " + trace.string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("gpu0 runs out of memory"));
  // Named at the op that reached the peak: the gradient buffer arriving on top of the
  // stashes of every forward.
  EXPECT_THAT(r.err, HasSubstr("at 0RECV_G"));
  EXPECT_FALSE(std::filesystem::exists(trace));
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().extension(), ".textproto") << "left behind: " << entry.path();
  }
}

TEST_F(ScenarioErrors, AllowOomReportsInstead) {
  const std::string big = replace(kUniform, "activation_bytes: 0 parameter_bytes: 0 }\n  layers",
                                  "activation_bytes: 20000000000 parameter_bytes: 0 }\n  layers");
  const CliResult r = simulate(big, "--allow-oom --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"out_of_memory\": true"));
}

// A typo gets the nearest known name, in a file and on the command line alike, and
// nothing but the one error line on stderr.
TEST_F(ScenarioErrors, TyposSuggestTheNearestName) {
  CliResult r = simulate(replace(kUniform, "microbatches: 8", "microbatch: 8"));
  expect_input_error(r, "14", "microbatch", "did you mean 'microbatches'?");
  r = simulate(replace(kUniform, "kind: GPIPE", "kind: GPIPF"));
  expect_input_error(r, "15", "kind", "did you mean 'GPIPE'?");
  r = simulate(kUniform, "--set training.microbatch=4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no field 'microbatch' in pipetwin.proto.Training; did you mean "
                               "'microbatches'?"));
  r = simulate(kUniform, "--set schedule.kind=one_f_one_b");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("did you mean 'ONE_F_ONE_B'?"));
  EXPECT_EQ(r.err.find("libprotobuf"), std::string::npos) << r.err;
  r = simulate(kUniform, "--set cluster.preset=dgx-h10");
  EXPECT_THAT(r.err, HasSubstr("did you mean 'dgx-h100'?"));
  r = simulate(kUniform, "--engine simgird");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("did you mean 'simgrid'?"));
}

// FSDP's reshard and hybrid sharding need a ZeRO stage to act on, and shard groups that tile
// the data-parallel replicas.
TEST_F(ScenarioErrors, FsdpVariantsThatDoNotApply) {
  const std::string fsdp = "--set training.zero_stage=FSDP ";
  EXPECT_EQ(simulate(kExperts, fsdp + "--set training.fsdp_reshard=AFTER_STEP "
                                      "--set training.fsdp_shard_size=4")
                .exit_code,
            0);
  expect_refused(simulate(kExperts, "--set training.fsdp_reshard=AFTER_BACKWARD"),
                 "training.fsdp_reshard", "training.zero_stage: 3");
  expect_refused(simulate(kExperts,
                          "--set training.zero_stage=ZERO_2 "
                          "--set training.fsdp_reshard=AFTER_STEP"),
                 "training.fsdp_reshard", "training.zero_stage: 3");
  expect_refused(simulate(kExperts, "--set training.fsdp_shard_size=2"), "training.fsdp_shard_size",
                 "needs a training.zero_stage");
  expect_refused(simulate(kExperts, fsdp + "--set training.fsdp_shard_size=3"),
                 "training.fsdp_shard_size", "must divide the 8");
}

}  // namespace
}  // namespace pipetwin
