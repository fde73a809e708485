// The training section alone: a batch that splits into replicas and microbatches, and the
// rules of tensor parallelism, checked against a resolved model, cluster and schedule.
#include "sim/scenario/resolve_training.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using ::testing::ThrowsMessage;

LoadedScenario load(const std::string& text) {
  return parse_scenario(text, "t.textproto", ".", false, {});
}

TEST(ResolveTraining, CopiesTheFieldsOfAValidSection) {
  const LoadedScenario loaded = load(
      "training { global_batch: 64 microbatches: 8 iterations: 3 data_parallel: 2\n"
      "           precision: BF16 mixed_precision: true tensor_parallel: 2 }");
  const TrainingSpec t = resolve_training(ScenarioChecker(loaded), loaded.scenario);
  EXPECT_EQ(t.global_batch, 64);
  EXPECT_EQ(t.microbatches, 8);
  EXPECT_EQ(t.iterations, 3);
  EXPECT_EQ(t.data_parallel, 2);
  EXPECT_EQ(t.tensor_parallel, 2);
  EXPECT_TRUE(t.mixed_precision);
}

TEST(ResolveTraining, TheBatchMustSplitIntoReplicasAndMicrobatches) {
  const auto error = [](const std::string& fields) {
    const LoadedScenario loaded = load("training {\n" + fields + "\n}");
    try {
      resolve_training(ScenarioChecker(loaded), loaded.scenario);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("global_batch: 30 microbatches: 2 data_parallel: 4"),
            "t.textproto:2: training.data_parallel: the batch of 30 samples does not split into "
            "4 equal replicas");
  EXPECT_EQ(error("global_batch: 32 microbatches: 16 data_parallel: 4"),
            "t.textproto:2: training.microbatches: 16 microbatches cannot split a replica's 8 "
            "samples");
  EXPECT_EQ(error("global_batch: 32 microbatches: 4 mixed_precision: true"),
            "t.textproto:2: training.mixed_precision: needs a 16-bit training.precision (FP16 or "
            "BF16) next to the fp32 master weights");
  EXPECT_EQ(error("global_batch: 32 microbatches: 4 sequence_parallel: true"),
            "t.textproto:2: training.sequence_parallel: splits activations among "
            "tensor-parallel GPUs: set training.tensor_parallel above 1");
}

TEST(ResolveTraining, ZeroStageTakesNumbersAndTheFsdpAlias) {
  for (const auto& [text, stage] : std::vector<std::pair<std::string, int32_t>>{
           {"", 0}, {"zero_stage: 1", 1}, {"zero_stage: ZERO_2", 2}, {"zero_stage: FSDP", 3}}) {
    const LoadedScenario loaded =
        load("training { global_batch: 8 microbatches: 2 data_parallel: 2 " + text + " }");
    EXPECT_EQ(resolve_training(ScenarioChecker(loaded), loaded.scenario).zero_stage, stage) << text;
  }
}

// ZeRO shards identical replicas' state: schedules and features that keep or move whole
// weight versions per device are turned away, naming the field.
TEST(CheckZeroStage, RefusesWhatItCannotShard) {
  const LoadedScenario loaded = load("training { zero_stage: 3 }");
  const auto error = [&](const ResolvedScenario& setup) {
    try {
      check_zero_stage(ScenarioChecker(loaded), setup);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  ResolvedScenario setup;
  setup.training.zero_stage = 3;
  setup.schedule.kind = proto::ONE_F_ONE_B;
  EXPECT_EQ(error(setup), "no error");
  for (const proto::ScheduleKind kind : {proto::DUALPIPE, proto::PIPEFB, proto::PIPEDREAM_2BW}) {
    setup.schedule.kind = kind;
    EXPECT_THAT(error(setup), ::testing::HasSubstr("t.textproto:1: training.zero_stage: shards"));
  }
  setup.schedule.kind = proto::ONE_F_ONE_B;
  setup.schedule.offload.enabled = true;
  EXPECT_THAT(error(setup), ::testing::HasSubstr("training.zero_stage: stage 3 gathers"));
  setup.training.zero_stage = 2;
  EXPECT_EQ(error(setup), "no error");
}

TEST(CheckTensorParallel, LayersHeadsAndNodesMustSplit) {
  const LoadedScenario loaded =
      load("model { zoo { name: \"gpt\" heads: 6 } }\ntraining { tensor_parallel: 4 }");
  ResolvedScenario setup;
  setup.training.tensor_parallel = 4;
  setup.cluster.gpus_per_node = 8;
  setup.model.layers.resize(2);
  const ScenarioChecker check(loaded);
  EXPECT_THAT([&] { check_tensor_parallel(check, loaded.scenario, setup); },
              ThrowsMessage<InputError>(
                  "t.textproto:2: training.tensor_parallel: only transformer and MLP layers "
                  "split across GPUs (model.zoo.name: gpt or mlp)"));
  setup.model.layers[1].tp_fwd_collectives = 1;
  EXPECT_THAT([&] { check_tensor_parallel(check, loaded.scenario, setup); },
              ThrowsMessage<InputError>("t.textproto:2: training.tensor_parallel: the 6 attention "
                                        "heads do not split 4 ways"));
  setup.training.tensor_parallel = 1;  // nothing to split
  check_tensor_parallel(check, loaded.scenario, setup);
}

}  // namespace
}  // namespace pipetwin
