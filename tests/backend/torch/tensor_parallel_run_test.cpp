// `pipetwin run` with training.tensor_parallel (and sequence_parallel): every stage's layers
// split Megatron-style across T LibTorch ranks over Gloo. Split layers start from the
// reference's weights, and each forward collective has its conjugate in the backward, so
// the split pipeline trains exactly what one process trains.
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

struct SplitCase {
  std::string name, args;
};

// ctest and gtest print a case as its command line.
void PrintTo(const SplitCase& c, std::ostream* os) { *os << c.args; }

class RealRunTensorParallel : public ::testing::TestWithParam<SplitCase> {};

// The losses of every iteration and each layer's weight sum (the ranks' shards added up,
// replicated parameters counted once) equal those of the single-process reference.
TEST_P(RealRunTensorParallel, EqualsTheSingleProcessReference) {
  SKIP_WITHOUT_TORCH();
  const std::string args = GetParam().args + " --set training.iterations=3";
  const nlohmann::json split = real_run_json(args);
  const nlohmann::json reference = real_run_json(args + " --reference");
  ASSERT_FALSE(split.empty());
  ASSERT_FALSE(reference.empty());
  expect_close(split["losses"], reference["losses"], 1e-5);
  expect_close(split["layer_weight_sums"], reference["layer_weight_sums"], 1e-5);
}

// The GPT: 2 blocks of hidden 64, 4 heads, sequence 16 (scenarios/gpt-tp2-pp2-cpu). The
// MLP: 4 layers of 512 units, two column/row pairs.
constexpr const char* kGpt = "builtin:gpt-tp2-pp2-cpu";
constexpr const char* kMlp =
    "builtin:mlp-cpu-2rank --set training.tensor_parallel=2 --set cluster.gpus_per_node=4";

INSTANTIATE_TEST_SUITE_P(
    Splits, RealRunTensorParallel,
    ::testing::Values(
        SplitCase{"GptTp2Pp1", std::string(kGpt) + " --set schedule.stages=1"},
        SplitCase{"GptTp2Pp2OneFOneB", kGpt},
        SplitCase{"GptTp2Pp2Gpipe", std::string(kGpt) + " --set schedule.kind=GPIPE"},
        SplitCase{
            "GptTp2Pp1Sequence",
            std::string(kGpt) + " --set schedule.stages=1 --set training.sequence_parallel=true"},
        SplitCase{"GptTp2Pp2SequenceOneFOneB",
                  std::string(kGpt) + " --set training.sequence_parallel=true"},
        SplitCase{"GptTp2Pp2SequenceGpipe", std::string(kGpt) +
                                                " --set training.sequence_parallel=true "
                                                "--set schedule.kind=GPIPE"},
        // The backward's collectives under the weight gradients: in the Program a
        // reduce-scatter and an all-gather per backward, which ran inside the pass.
        SplitCase{"GptTp2Pp2SequenceGradOverlap",
                  std::string(kGpt) + " --set training.sequence_parallel=true "
                                      "--set training.tensor_parallel_grad_overlap=true"},
        // SGD: plain gradient steps, no Adam normalisation to hide a wrong gradient scale.
        SplitCase{"GptTp2Pp2Sgd", std::string(kGpt) + " --set training.optimizer=SGD"},
        SplitCase{"GptTp2Pp2SequenceSgd", std::string(kGpt) +
                                              " --set training.sequence_parallel=true "
                                              "--set training.optimizer=SGD"},
        // TP 2 x PP 2 x DP 2: eight ranks; the replicas' gradient all-reduce runs among
        // the ranks t of each stage.
        SplitCase{"GptTp2Pp2Dp2", std::string(kGpt) + " --set training.data_parallel=2 "
                                                      "--set cluster.gpus_per_node=8"},
        // Two model chunks per rank, each split across the same two ranks.
        SplitCase{"GptTp2Pp2Interleaved", std::string(kGpt) +
                                              " --set schedule.kind=INTERLEAVED_ONE_F_ONE_B "
                                              "--set schedule.virtual_stages=2 "
                                              "--set model.zoo.layers=4"},
        // Weight stashing: each forward's copy of the weights is split too (against the
        // stale-weights reference).
        SplitCase{"GptTp2Pp2TwoBwSequence", std::string(kGpt) +
                                                " --set schedule.kind=PIPEDREAM_2BW "
                                                "--set training.sequence_parallel=true"},
        // A stage boundary inside each block pair of the MLP: each rank sends its 1/T of
        // the features to the same rank of the next stage.
        SplitCase{"MlpTp2Pp1", std::string(kMlp) + " --set schedule.stages=1"},
        SplitCase{"MlpTp2Pp2OneFOneB", kMlp},
        SplitCase{"MlpTp2Pp2Gpipe", std::string(kMlp) + " --set schedule.kind=GPIPE"},
        SplitCase{"MlpTp2Pp2CutInsideAPair",
                  std::string(kMlp) + " --set 'schedule.partition=[1, 3]'"}),
    [](const auto& info) { return info.param.name; });

TEST(RealRunTensorParallelErrors, HeadsThatDoNotSplitAreBadInput) {
  SKIP_WITHOUT_TORCH();
  const CliResult r = run_pipetwin(
      "run builtin:gpt-tp2-pp2-cpu --set training.tensor_parallel=3 "
      "--set cluster.gpus_per_node=6");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("training.tensor_parallel"));
  EXPECT_THAT(r.err, HasSubstr("the 4 attention heads do not split 3 ways"));
}

TEST(RealRunTensorParallelErrors, AVocabularyThatDoesNotSplitIsBadInput) {
  SKIP_WITHOUT_TORCH();
  const CliResult r = run_pipetwin("run builtin:gpt-tp2-pp2-cpu --set model.zoo.vocab=97");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("model.zoo.vocab (97) does not split 2 ways"));
}

TEST(RealRunTensorParallelErrors, AnMlpWithoutPairsIsBadInput) {
  SKIP_WITHOUT_TORCH();
  const CliResult r = run_pipetwin(std::string("run ") + kMlp + " --set model.zoo.layers=3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("model.zoo.layers must be even"));
}

// The shipped scenario runs on four ranks and its measured timeline lines up with the
// simulated one, span for span.
TEST(RealRunTensorParallelTimeline, MatchesTheSimulationSpanForSpan) {
  SKIP_WITHOUT_TORCH();
  const TempDir dir;
  const std::string measured = (dir.path() / "measured.timeline").string();
  const std::string simulated = (dir.path() / "simulated.timeline").string();
  const std::string small = " --set training.iterations=2";
  const CliResult r =
      run_pipetwin("run builtin:gpt-tp2-pp2-cpu" + small + " --timeline " + measured);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const CliResult s =
      run_pipetwin("simulate builtin:gpt-tp2-pp2-cpu" + small + " --timeline " + simulated);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const Timeline t = read_timeline_file(measured);
  EXPECT_EQ(t.source, "torch");
  int devices = 0;
  for (const Span& span : t.spans) devices = std::max(devices, span.device + 1);
  EXPECT_EQ(devices, 4);
  const CliResult c = run_pipetwin("compare " + simulated + " " + measured + " --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const nlohmann::json j = nlohmann::json::parse(c.out);
  EXPECT_EQ(j["unmatched_a"], 0) << c.out;
  EXPECT_EQ(j["unmatched_b"], 0) << c.out;
}

}  // namespace
}  // namespace pipetwin
