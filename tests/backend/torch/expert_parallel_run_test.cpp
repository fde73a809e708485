// `pipetwin run` of a mixture-of-experts transformer with training.expert_parallel: the
// replicas of each stage split its experts and exchange every MoE block's tokens over Gloo
// (all-to-all forward and backward). Routing is dropless and per token, the exchange sends
// each token to the rank of each expert its router chose and brings the result back, and
// expert gradients sum over the ranks that hold the same experts: the run trains what one
// process trains, however the pipeline, the replicas, tensor parallelism (with the experts
// split like the MLP, or folded whole over the tensor-parallel ranks) and the schedule cut it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli_runner.h"
#include "real_run_helpers.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using testing::expect_close;
using ::testing::HasSubstr;
using testing::real_run_json;
using testing::run_pipetwin;
using testing::TempDir;

struct MoeCase {
  std::string name, args;
};

// ctest and gtest print a case as its command line.
void PrintTo(const MoeCase& c, std::ostream* os) { *os << c.args; }

class RealRunExpertParallel : public ::testing::TestWithParam<MoeCase> {};

// The losses of every iteration and each layer's weight sum (every expert counted once, on
// the rank that holds it) equal those of the single-process reference, which holds every
// expert and routes each microbatch's tokens itself.
TEST_P(RealRunExpertParallel, EqualsTheSingleProcessReference) {
  SKIP_WITHOUT_TORCH();
  const std::string args = GetParam().args + " --set training.iterations=3";
  const nlohmann::json split = real_run_json(args);
  const nlohmann::json reference = real_run_json(args + " --reference");
  ASSERT_FALSE(split.empty());
  ASSERT_FALSE(reference.empty());
  expect_close(split["losses"], reference["losses"], 1e-5);
  expect_close(split["layer_weight_sums"], reference["layer_weight_sums"], 1e-5);
}

// Mixtral-shaped: 2 blocks of hidden 64, 4 query and 2 key-value heads, 4 SwiGLU experts
// of 96, top-2 (scenarios/moe-ep2-pp2-cpu: PP 2 x DP 2, EP 2).
constexpr const char* kMoe = "builtin:moe-ep2-pp2-cpu";

std::string with(const std::string& settings) { return std::string(kMoe) + " " + settings; }

// Tensor parallelism 2 on nodes wide enough for it; with experts, sequence parallelism too.
constexpr const char* kTp2 = "--set training.tensor_parallel=2 --set cluster.gpus_per_node=8";
constexpr const char* kTp2Sp =
    "--set training.tensor_parallel=2 --set training.sequence_parallel=true "
    "--set cluster.gpus_per_node=8";

INSTANTIATE_TEST_SUITE_P(
    Splits, RealRunExpertParallel,
    ::testing::Values(
        MoeCase{"Ep2Pp2OneFOneB", kMoe},
        // DualPipe: two copies of each stage per rank, both exchanging tokens; the split
        // backward's W walks the exchange's backward again, as every replica does.
        MoeCase{"Ep2Pp2DualPipe", with("--set schedule.kind=DUALPIPE")},
        MoeCase{"Ep2Pp1", with("--set schedule.stages=1 --set cluster.gpus_per_node=2")},
        // Four replicas in two expert groups: the experts' gradients sum over the two
        // replicas that hold them, the rest over all four.
        MoeCase{"Ep2Dp4Pp2", with("--set training.data_parallel=4 --set cluster.gpus_per_node=8 "
                                  "--set training.global_batch=32")},
        // Every expert on every replica: the exchange is local.
        MoeCase{"Ep1Dp2Pp2", with("--set training.expert_parallel=1")},
        // SGD (plain gradient steps, no Adam normalisation to hide a wrong gradient scale)
        // under GPipe, with GELU MLPs and LayerNorms, the older transformer.
        MoeCase{"Ep2GpipeSgdGeluLayerNorm",
                with("--set schedule.kind=GPIPE --set training.optimizer=SGD "
                     "--set model.zoo.mlp=GELU --set model.zoo.norm=LAYERNORM")},
        // Top-1 (the router's weight is the gate itself) and a shared expert beside it; the
        // first block dense, as DeepSeek-V3's first three are.
        MoeCase{"Ep2Top1SharedFirstBlockDense",
                with("--set model.zoo.moe.top_k=1 --set model.zoo.moe.shared_experts=1 "
                     "--set model.zoo.moe.first_dense_layers=1")},
        // No experts at all: a Llama-shaped transformer from its config.json.
        MoeCase{"DenseLlama", with("--set model.hf_config=models/llama-tiny.json "
                                   "--set training.expert_parallel=1")},
        // Tensor parallelism 2 (attention by heads, the dense MLP by width, embedding and
        // logits by vocabulary), without and with sequence parallelism.
        MoeCase{"DenseLlamaTp2", with("--set model.hf_config=models/llama-tiny.json "
                                      "--set training.expert_parallel=1 " +
                                      std::string(kTp2) + " --set training.data_parallel=1")},
        MoeCase{
            "DenseLlamaTp2Sp",
            with("--set model.hf_config=models/llama-tiny.json --set training.expert_parallel=1 " +
                 std::string(kTp2) + " --set training.sequence_parallel=true")},
        // Experts split like the MLP over the tensor-parallel pair (ETP = TP), which gathers
        // its tokens; expert parallelism from the replicas.
        MoeCase{"SplitExpertsTp2Ep2", with(std::string(kTp2Sp) + " --set schedule.stages=1")},
        // MoE parallel folding: whole experts (ETP 1), the expert group of two the
        // tensor-parallel pair itself, each rank routing its half of the sequence.
        MoeCase{"FoldedEp2OverTp2",
                with(std::string(kTp2Sp) + " --set training.expert_tensor_parallel=1 "
                                           "--set training.data_parallel=1")},
        // Folded over the pair and both replicas: every rank its own experts.
        MoeCase{
            "FoldedEp4Tp2Dp2",
            with(std::string(kTp2Sp) + " --set training.expert_tensor_parallel=1 "
                                       "--set training.expert_parallel=4 --set schedule.stages=1")},
        // Two copies of each folded group (expert data parallelism 2): the experts' gradients
        // sum across the replicas, the group spanning the pair; a shared expert (split like
        // the MLP) beside the routed ones.
        // ZeRO with experts: the dense parameters sharded over the replicas, the experts'
        // over the ranks holding the same experts (none here: each expert group is the only
        // copy, updated whole where it lives).
        MoeCase{"FsdpEp2", with("--set training.zero_stage=3")},
        // DeepSeek-V3 as NeMo AutoModel trains it, in small: FSDP over 4 replicas, 2 copies of
        // each expert group sharding its experts, interleaved stages.
        MoeCase{
            "FsdpEp2Edp2Interleaved",
            with("--set training.zero_stage=3 --set training.data_parallel=4 "
                 "--set cluster.gpus_per_node=8 --set training.global_batch=32 "
                 "--set schedule.kind=INTERLEAVED_ONE_F_ONE_B --set schedule.virtual_stages=2")},
        // DeepSeek-V3's own: DualPipe with ZeRO-1 and expert parallelism.
        MoeCase{"ZeroOneDualPipe",
                with("--set training.zero_stage=1 --set schedule.kind=DUALPIPE")},
        // Qwen3-235B's layout on 256 H100s in small: tensor and sequence parallelism 2, the
        // experts folded whole over the tensor pair (EP 2, ETP 1), interleaved stages,
        // two replicas, the distributed optimizer (ZeRO-1), Megatron-Core's rank order.
        MoeCase{"Qwen3LayoutFolded",
                with(std::string(kTp2Sp) +
                     " --set training.expert_tensor_parallel=1 --set training.zero_stage=1 "
                     "--set schedule.kind=INTERLEAVED_ONE_F_ONE_B --set schedule.virtual_stages=2 "
                     "--set model.zoo.moe.dispatcher=DEEPEP "
                     "--set training.overlap_moe_expert_parallel_comm=true "
                     "--set training.rank_order=TP_CP_EP_DP_PP")},
        // Expert groups folded inside one replica (EP 2 of TP 4, as Megatron-Core folds EP 8
        // into TP x CP 32 at long context): the two groups' ranks that hold the same experts
        // sum their gradients, and the distributed optimizer (ZeRO-1) shards only the experts,
        // the one replica's dense weights being a shard of one.
        MoeCase{"FoldedEp2InsideTp4",
                with("--set model.zoo.kv_heads=4 --set training.tensor_parallel=4 "
                     "--set training.sequence_parallel=true --set cluster.gpus_per_node=8 "
                     "--set training.expert_tensor_parallel=1 --set training.data_parallel=1 "
                     "--set schedule.stages=1 --set training.zero_stage=1")},
        MoeCase{"FoldedEp2Edp2SharedExpert",
                with(std::string(kTp2Sp) + " --set training.expert_tensor_parallel=1 "
                                           "--set model.zoo.moe.shared_experts=1 "
                                           "--set training.global_batch=32")}),
    [](const auto& info) { return info.param.name; });

TEST(RealRunExpertParallelErrors, TokenDroppingIsBadInput) {
  SKIP_WITHOUT_TORCH();
  const CliResult r =
      run_pipetwin(std::string("run ") + kMoe + " --set model.zoo.moe.capacity_factor=1.25");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("model.zoo.moe.capacity_factor"));
}

// Megatron-Core routes each tensor-parallel rank's part of the sequence: experts with tensor
// parallelism need sequence parallelism, on real ranks as there.
TEST(RealRunExpertParallelErrors, ExpertsWithTensorParallelismNeedSequenceParallelism) {
  SKIP_WITHOUT_TORCH();
  const std::string split = std::string(kMoe) + " " + kTp2 + " --set schedule.stages=1";
  EXPECT_EQ(run_pipetwin("simulate " + split).exit_code, 0);
  const CliResult r = run_pipetwin("run " + split);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("training.sequence_parallel"));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(RealRunExpertParallelErrors, HeadsThatDoNotSplitAreBadInput) {
  SKIP_WITHOUT_TORCH();
  const CliResult r = run_pipetwin(
      std::string("run ") + kMoe +
      " --set training.tensor_parallel=4 --set training.sequence_parallel=true "
      "--set training.data_parallel=1 --set training.expert_parallel=1 --set schedule.stages=1 "
      "--set cluster.gpus_per_node=4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("model.zoo.kv_heads (2) does not split 4 ways"));
}

// The measured timeline lines up with the simulated one span for span, the all-to-alls
// included (empty on real ranks: the forward and backward that exchanged the tokens hold
// their time).
TEST(RealRunExpertParallelTimeline, MatchesTheSimulationSpanForSpan) {
  SKIP_WITHOUT_TORCH();
  const TempDir dir;
  const std::string measured = (dir.path() / "measured.timeline").string();
  const std::string simulated = (dir.path() / "simulated.timeline").string();
  const std::string small = " --set training.iterations=2";
  const CliResult r = run_pipetwin(std::string("run ") + kMoe + small + " --timeline " + measured);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const CliResult s =
      run_pipetwin(std::string("simulate ") + kMoe + small + " --timeline " + simulated);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const Timeline t = read_timeline_file(measured);
  int exchanges = 0;
  for (const Span& span : t.spans) exchanges += span.op == "ALL_TO_ALL";
  EXPECT_GT(exchanges, 0);
  const CliResult c = run_pipetwin("compare " + simulated + " " + measured + " --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const nlohmann::json j = nlohmann::json::parse(c.out);
  EXPECT_EQ(j["unmatched_a"], 0) << c.out;
  EXPECT_EQ(j["unmatched_b"], 0) << c.out;
}

}  // namespace
}  // namespace pipetwin
