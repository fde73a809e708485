// `pipetwin import`: scenarios from launch configurations that simulate, and every argument
// either read, accepted as without effect on a step's time, or refused by name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "sim/scenario/loaded_scenario.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using testing::run_pipetwin;
using testing::TempDir;

// Megatron-LM's examples/gpt3/train_gpt3_175b_distributed.sh, its training arguments as given.
constexpr char kGpt3[] =
    "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 2048 "
    "--max-position-embeddings 2048 --attention-backend auto --micro-batch-size 1 "
    "--global-batch-size 1536 --rampup-batch-size 16 16 5859375 --train-iters 500000 "
    "--weight-decay 0.1 --adam-beta1 0.9 --adam-beta2 0.95 --init-method-std 0.006 --clip-grad "
    "1.0 --fp16 --lr 6.0e-5 --lr-decay-style cosine --min-lr 6.0e-6 --lr-warmup-fraction .001 "
    "--lr-decay-iters 430000 --tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 "
    "--data-path /data/corpus_text_document --vocab-file gpt2-vocab.json --merge-file "
    "gpt2-merges.txt --split 949,50,1 --log-interval 100 --save-interval 10000 --eval-interval "
    "1000 --save /ckpt --load /ckpt --eval-iters 10 --tensorboard-dir /tb";

TEST(ImportMegatron, Gpt3175bBecomesAScenarioThatSimulates) {
  TempDir dir;
  const std::string out = (dir.path() / "gpt3.textproto").string();
  const CliResult r =
      run_pipetwin("import megatron --preset dgx-a100 --nodes 192 -o " + out + " -- " + kGpt3);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const LoadedScenario loaded = load_scenario(out, {});
  const proto::Scenario& s = loaded.scenario;
  EXPECT_EQ(s.model().zoo().layers(), 96);
  EXPECT_EQ(s.model().zoo().hidden(), 12288);
  EXPECT_EQ(s.model().zoo().vocab(), 51200);  // 50,257 padded to 128 x TP
  EXPECT_EQ(s.training().tensor_parallel(), 8);
  EXPECT_EQ(s.schedule().stages(), 16);
  EXPECT_EQ(s.training().data_parallel(), 12);  // 1,536 GPUs over 8 x 16
  EXPECT_EQ(s.training().microbatches(), 128);
  EXPECT_EQ(s.training().precision(), proto::FP16);
  EXPECT_EQ(s.run().steps(), 500000);
  const CliResult sim = run_pipetwin("simulate " + out + " --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_GT(nlohmann::json::parse(sim.out)["iteration_time_s"].get<double>(), 0);
}

TEST(ImportMegatron, ALlamaStyleMoeJobWithFp8AndInterleaving) {
  TempDir dir;
  const std::string out = (dir.path() / "moe.textproto").string();
  const CliResult r = run_pipetwin(
      "import megatron --nodes 8 -o " + out +
      " -- --num-layers 16 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 "
      "--group-query-attention --num-query-groups 8 --seq-length 4096 --swiglu --normalization "
      "RMSNorm --untie-embeddings-and-output-weights --vocab-size 128256 --num-experts 8 "
      "--moe-router-topk 2 --expert-model-parallel-size 8 --tensor-model-parallel-size 2 "
      "--sequence-parallel --pipeline-model-parallel-size 2 "
      "--num-layers-per-virtual-pipeline-stage 4 --micro-batch-size 1 --global-batch-size 256 "
      "--bf16 --fp8-format hybrid --fp8-recipe tensorwise --use-distributed-optimizer "
      "--overlap-grad-reduce --recompute-granularity selective");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const proto::Scenario s = load_scenario(out, {}).scenario;
  EXPECT_EQ(s.model().zoo().kv_heads(), 8);
  EXPECT_EQ(s.model().zoo().mlp(), proto::Zoo::SWIGLU);
  EXPECT_FALSE(s.model().zoo().tied_embeddings());
  EXPECT_EQ(s.model().zoo().moe().experts(), 8);
  EXPECT_EQ(s.training().data_parallel(), 16);  // 64 GPUs over 2 x 2
  EXPECT_EQ(s.training().expert_parallel(), 8);
  EXPECT_EQ(s.training().precision(), proto::FP8);
  EXPECT_EQ(s.training().zero_stage(), proto::Training::ZERO_1);
  EXPECT_EQ(s.training().recompute(), proto::Training::SELECTIVE);
  EXPECT_EQ(s.schedule().kind(), proto::INTERLEAVED_ONE_F_ONE_B);
  EXPECT_EQ(s.schedule().virtual_stages(), 2);  // 16 layers over 2 stages of chunks of 4
  const CliResult sim = run_pipetwin("simulate " + out + " --json");
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
}

TEST(ImportMegatron, UnknownOrInconsistentArgumentsAreNamed) {
  const auto refused = [](const std::string& args, const std::string& what) {
    const CliResult r = run_pipetwin("import megatron --nodes 2 -- " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  };
  const std::string base =
      "--num-layers 8 --hidden-size 1024 --num-attention-heads 8 --seq-length 1024 "
      "--micro-batch-size 1 ";
  refused(base + "--global-batch-size 64 --frobnicate 3", "--frobnicate");
  refused(base + "--global-batch-size 64 --hiden-size 3", "did you mean '--hidden-size'");
  refused(base + "--global-batch-size 63", "--global-batch-size: 63 is not a multiple");
  refused(base + "--global-batch-size 64 --tensor-model-parallel-size 3", "--nodes: 16 GPUs");
  refused(base + "--global-batch-size 64 --fp8-format e5m2", "--fp8-format: 'e5m2'");
  refused("--hidden-size 8", "--num-layers: missing");
}

const std::string kTitan = std::string(PIPETWIN_SOURCE_DIR) + "/tests/data/torchtitan/";

// torchtitan's Llama 3 train configs (its presets for 64 A100s): FSDP over what TP leaves.
TEST(ImportTorchtitan, Llama3JobFilesBecomeScenariosThatSimulate) {
  TempDir dir;
  const std::string out = (dir.path() / "titan.textproto").string();
  CliResult r = run_pipetwin("import torchtitan " + kTitan +
                             "llama3_70b.toml --preset dgx-a100 --nodes 8 -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  proto::Scenario s = load_scenario(out, {}).scenario;
  EXPECT_EQ(s.model().zoo().layers(), 80);
  EXPECT_EQ(s.model().zoo().hidden(), 8192);
  EXPECT_EQ(s.training().tensor_parallel(), 8);
  EXPECT_EQ(s.training().data_parallel(), 8);  // the shard degree -1: 64 GPUs over TP 8
  EXPECT_EQ(s.training().zero_stage(), proto::Training::FSDP);
  EXPECT_EQ(s.training().global_batch(), 64);  // local_batch_size 8 on each of 8 replicas
  EXPECT_EQ(s.training().recompute(), proto::Training::FULL);
  EXPECT_EQ(s.run().steps(), 1000);
  EXPECT_EQ(run_pipetwin("simulate " + out).exit_code, 0);

  r = run_pipetwin("import torchtitan " + kTitan +
                   "llama3_8b.toml --preset dgx-a100 --nodes 8 -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  s = load_scenario(out, {}).scenario;
  EXPECT_EQ(s.model().zoo().layers(), 32);
  EXPECT_EQ(s.training().data_parallel(), 64);
  EXPECT_EQ(s.training().recompute(), proto::Training::SELECTIVE);
  EXPECT_EQ(run_pipetwin("simulate " + out).exit_code, 0);
}

TEST(ImportTorchtitan, UnknownKeysAndSectionsAreNamedWithTheirLine) {
  TempDir dir;
  const auto refused = [&](const std::string& toml, const std::string& what) {
    const std::string path = (dir.path() / "job.toml").string();
    std::ofstream(path) << toml;
    const CliResult r = run_pipetwin("import torchtitan " + path + " --nodes 1");
    EXPECT_EQ(r.exit_code, 2) << toml << "\n" << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  };
  const std::string model = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n";
  refused(model + "[parallelism]\ntensor_parallel_degre = 2\n",
          "job.toml:5: parallelism.tensor_parallel_degre: unknown key");
  refused(model + "[telemetry]\nx = 1\n", "job.toml:4: [telemetry]: unknown section");
  refused("[model]\nname = \"llama3\"\nflavor = \"13B\"\n", "job.toml:3: model llama3 13B");
  refused(model + "[parallelism]\ntensor_parallel_degree = 3\n", "--nodes: 8 GPUs");
  refused(model + "[training\n", "job.toml:4");
  refused(model + "[training]\nseq_len = \"long\"\n", "training.seq_len: not the expected type");
}

// Traces of other jobs as timelines that compare and report read.
TEST(ImportTraces, MegatronAndKinetoTracesBecomeTimelines) {
  TempDir dir;
  const std::string st = (dir.path() / "st.timeline").string();
  const std::string data = std::string(PIPETWIN_SOURCE_DIR) + "/tests/data/";
  CliResult r = run_pipetwin("import " + data + "straggler-analysis/timeline-ST.json.gz --meta " +
                             data + "straggler-analysis/meta-ST.yaml -o " + st);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("6784 spans on 8 devices"), std::string::npos) << r.out;
  r = run_pipetwin("compare " + st + " " + st + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_pipetwin("report " + st + " -o " + (dir.path() / "st.html").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;

  const std::string hta = (dir.path() / "hta.timeline").string();
  r = run_pipetwin("import " + data + "hta/sampled_rank-0.json.gz " + data +
                   "hta/sampled_rank-1.json.gz -o " + hta);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("on 2 devices"), std::string::npos) << r.out;
  r = run_pipetwin("import " + data + "hta/sampled_rank-0.json.gz");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-o FILE.timeline"), std::string::npos) << r.err;
}

// The whole path from another framework's job to a twin of it: import the traces (`import`,
// the words after it) against the job's scenario, calibrate the scenario from them, simulate the
// fitted scenario and compare: `compare --json`'s object, empty after a failed step.
nlohmann::json twin_of(const std::string& import_words, const std::string& scenario) {
  TempDir dir;
  const std::string measured = (dir.path() / "measured.timeline").string();
  const std::string fitted = (dir.path() / "fitted.textproto").string();
  const std::string simulated = (dir.path() / "fitted.timeline").string();
  for (const std::string& command :
       {"import " + import_words + " --scenario " + scenario + " -o " + measured,
        "calibrate " + scenario + " --from " + measured + " -o " + fitted,
        "simulate " + fitted + " --timeline " + simulated}) {
    const CliResult r = run_pipetwin(command);
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
    if (r.exit_code != 0) return {};
  }
  const CliResult r = run_pipetwin("compare " + measured + " " + simulated + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json{};
}

TEST(ImportTraces, AMegatronJobCalibratesItsScenarioAndComparesWithItsSimulation) {
  const std::string data = std::string(PIPETWIN_SOURCE_DIR) + "/tests/data/straggler-analysis/";
  const nlohmann::json c = twin_of(data + "timeline-ST.json.gz --meta " + data + "meta-ST.yaml",
                                   data + "scenario-ST.textproto");
  ASSERT_FALSE(c.empty());
  // Every pass and pipeline transfer pairs with its simulated span.
  EXPECT_EQ(c["matched"].get<int>(), 5888);
  EXPECT_NEAR(c["makespan_error"].get<double>(), 0, 0.01);
}

// A PyTorch profiler trace the same way: its kernels folded into annotated passes.
TEST(ImportTraces, AKinetoJobCalibratesItsScenarioAndComparesWithItsSimulation) {
  const std::string data = std::string(PIPETWIN_SOURCE_DIR) + "/tests/data/hta/";
  const nlohmann::json c =
      twin_of(data + "sampled_rank-0.json.gz " + data + "sampled_rank-1.json.gz --passes",
              data + "scenario-hta.textproto");
  ASSERT_FALSE(c.empty());
  // Per rank and step a forward, a backward, an optimizer step, and the simulation's two
  // gradient all-reduces paired with the first two of the trace's NCCL all-reduces.
  EXPECT_EQ(c["matched"].get<int>(), 2 * 2 * 5);
  EXPECT_NEAR(c["makespan_error"].get<double>(), 0, 0.05);
}

// calibrate --from, compare, report and trace take the traces themselves, read as `import`
// reads them: an op timeline with the meta-X.yaml beside it, a profiler trace's passes.
TEST(ImportTraces, CommandsTakeTheTracesDirectly) {
  TempDir dir;
  const std::string st = std::string(PIPETWIN_SOURCE_DIR) + "/tests/data/straggler-analysis/";
  const std::string hta = std::string(PIPETWIN_SOURCE_DIR) + "/tests/data/hta/";
  const std::string imported = (dir.path() / "st.timeline").string();
  CliResult r = run_pipetwin("import " + st + "timeline-ST.json.gz --meta " + st +
                             "meta-ST.yaml -o " + imported);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string direct = (dir.path() / "direct.textproto").string();
  const std::string via = (dir.path() / "via.textproto").string();
  r = run_pipetwin("calibrate " + st + "scenario-ST.textproto --from " + st +
                   "timeline-ST.json.gz -o " + direct);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_pipetwin("calibrate " + st + "scenario-ST.textproto --from " + imported + " -o " + via);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto fields = [](const std::string& path) {  // the scenario without its comment lines
    std::ifstream in(path);
    std::string line, out;
    while (std::getline(in, line)) {
      if (line.rfind('#', 0) != 0) out += line + "\n";
    }
    return out;
  };
  EXPECT_EQ(fields(direct), fields(via));
  r = run_pipetwin("compare " + st + "timeline-ST.json.gz " + imported + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["unmatched_a"].get<int>(), 0);
  r = run_pipetwin("report " + hta + "sampled_rank-0.json.gz -o " +
                   (dir.path() / "hta.html").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // An op timeline whose parallel sizes are not beside it is named, with the way out.
  std::filesystem::copy_file(st + "timeline-ST.json.gz", dir.path() / "timeline-X.json.gz");
  r = run_pipetwin("trace " + (dir.path() / "timeline-X.json.gz").string() + " -o " +
                   (dir.path() / "x.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--meta META.yaml"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pipetwin
