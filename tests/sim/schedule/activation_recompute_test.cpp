// Activation recomputation of transformer blocks (Korthikanti et al. 2022): a block's stash
// becomes its 16-bit input (full) or loses its attention core's 5as^2 bytes (selective); its
// backward pays its forward again (full, tensor-parallel all-reduces included) or the
// attention core's 4s^2h FLOPs (selective); the embedding and head are not recomputed; with
// free links the iteration grows by exactly the recomputed forwards; the engines agree; a
// model that does not fit fits with it; bad settings name the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "cli_runner.h"
#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/simgrid/simgrid_executor.h"
#include "small_gpt.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

constexpr double kSeq = 256, kHidden = 1024, kHeads = 16;

// testing::small_gpt with 4 microbatches and the given recomputation.
ResolvedScenario gpt(int stages, int blocks, int tp, const std::string& recompute,
                     std::vector<std::string> more = {}) {
  more.insert(more.begin(), "training.recompute=" + recompute);
  return testing::small_gpt(stages, blocks, 4, tp, more);
}

const ModelLayer& block(const ResolvedScenario& setup) { return setup.model.layers[1]; }

double makespan(const ExecutionTimes& t) {
  return *std::max_element(t.end_s.begin(), t.end_s.end());
}

TEST(ActivationRecompute, BlocksKeepTheirInputOrDropTheAttentionCore) {
  const double s = kSeq, h = kHidden, a = kHeads;
  const ResolvedScenario none = gpt(2, 4, 1, "NONE");
  const ResolvedScenario selective = gpt(2, 4, 1, "SELECTIVE");
  const ResolvedScenario full = gpt(2, 4, 1, "FULL");
  EXPECT_DOUBLE_EQ(block(none).stash_bytes_per_sample, s * h * (34 + 5 * a * s / h));
  EXPECT_DOUBLE_EQ(block(selective).stash_bytes_per_sample, s * h * 34);
  EXPECT_DOUBLE_EQ(block(full).stash_bytes_per_sample, 2 * s * h);
  EXPECT_DOUBLE_EQ(block(selective).bwd.flops_per_sample,
                   block(none).bwd.flops_per_sample + 4 * s * s * h);
  EXPECT_DOUBLE_EQ(block(full).bwd.flops_per_sample,
                   block(none).bwd.flops_per_sample + block(none).fwd.flops_per_sample);
  EXPECT_EQ(block(full).tp_bwd_collectives, 4);
  EXPECT_EQ(block(selective).tp_bwd_collectives, 2);
  // The embedding and the head keep what they kept.
  for (const ResolvedScenario* r : {&selective, &full}) {
    EXPECT_EQ(r->model.layers.front().stash_bytes_per_sample,
              none.model.layers.front().stash_bytes_per_sample);
    EXPECT_EQ(r->model.layers.back().stash_bytes_per_sample,
              none.model.layers.back().stash_bytes_per_sample);
    EXPECT_EQ(r->model.layers.back().bwd.flops_per_sample,
              none.model.layers.back().bwd.flops_per_sample);
  }
}

// With memory-bound kernels timed (model.zoo.memory_efficiency), selective recomputation
// also runs the attention core's scale, mask, softmax and dropout again: 9as^2 bytes per
// sample at the memory-bound bandwidth, on top of its 4s^2h FLOPs; full recomputation runs the
// whole forward again, its memory-bound time included.
TEST(ActivationRecompute, SelectiveRerunsTheCoresMemoryBoundKernelsAtTheirBandwidth) {
  const double s = kSeq, a = kHeads;
  const std::vector<std::string> timed = {"model.zoo.memory_efficiency=0.8",
                                          "cluster.gpu.memory_bandwidth_gbytes_per_s=2000"};
  const double bandwidth = 0.8 * 2000e9;
  const ResolvedScenario none = gpt(2, 4, 1, "NONE", timed);
  const ResolvedScenario selective = gpt(2, 4, 1, "SELECTIVE", timed);
  const ResolvedScenario full = gpt(2, 4, 1, "FULL", timed);
  const double core = 9 * a * s * s / bandwidth;
  EXPECT_DOUBLE_EQ(block(none).attention_memory_seconds_per_sample, core);
  EXPECT_DOUBLE_EQ(block(selective).bwd.seconds_per_sample,
                   block(none).bwd.seconds_per_sample + core);
  EXPECT_DOUBLE_EQ(block(selective).bwd.flops_per_sample,
                   block(none).bwd.flops_per_sample + 4 * s * s * kHidden);
  EXPECT_DOUBLE_EQ(block(full).bwd.seconds_per_sample,
                   block(none).bwd.seconds_per_sample + block(none).fwd.seconds_per_sample);
  // Without memory-bound timing (the flat model) nothing but FLOPs is rerun.
  EXPECT_EQ(block(gpt(2, 4, 1, "SELECTIVE")).bwd.seconds_per_sample,
            block(gpt(2, 4, 1, "NONE")).bwd.seconds_per_sample);
}

// Per GPU of a stage of T: the full checkpoint is kept whole, or split by sequence
// parallelism; the selective stash keeps Korthikanti's sh(10 + 24/T).
TEST(ActivationRecompute, StashesPerTensorParallelGpuFollowTheFormulas) {
  const double s = kSeq, h = kHidden, samples = 2, ids = s * 8;
  const int tp = 4;
  const std::string halves = "schedule.partition=[3,3]";  // embedding + 2 blocks; 2 + head
  const auto stage0_forward_stash = [&](const std::string& recompute, bool sp) {
    const Program p = build_program(
        gpt(2, 4, tp, recompute,
            {halves, sp ? "training.sequence_parallel=true" : "training.iterations=1"}));
    for (const Instruction& ins : p.instructions) {
      if (ins.op == Op::kFwd && ins.stage == 0) return static_cast<double>(ins.stash_bytes);
    }
    return -1.0;
  };
  EXPECT_NEAR(stage0_forward_stash("FULL", false), samples * (ids + 2 * 2 * s * h), 2);
  EXPECT_NEAR(stage0_forward_stash("FULL", true), samples * (ids + 2 * 2 * s * h) / tp, 2);
  EXPECT_NEAR(stage0_forward_stash("SELECTIVE", false),
              samples * (ids + 2 * s * h * (10 + 24.0 / tp)), 2);
  EXPECT_NEAR(stage0_forward_stash("SELECTIVE", true), samples * (ids + 2 * s * h * 34) / tp, 2);
}

// With free links and one microbatch on one stage, an iteration is the sum of its passes:
// full recomputation adds every block's forward once more.
TEST(ActivationRecompute, FullRecomputationAddsTheBlocksForwardsToTheIteration) {
  for (const int tp : {1, 2}) {
    const auto iteration = [&](const std::string& recompute) {
      ResolvedScenario setup =
          gpt(1, 3, tp, recompute, {"training.microbatches=1", "training.global_batch=2"});
      setup.cluster.intra_node = {1e30, 0};
      setup.cluster.inter_node = {1e30, 0};
      setup.cluster.collectives.model = CollectivesSpec::Model::kTextbook;  // no NCCL latencies
      return makespan(run_analytic(build_program(setup), setup.cluster));
    };
    const ResolvedScenario none = gpt(1, 3, tp, "NONE");
    const double block_forward =
        block(none)
            .fwd.curve(none.cluster.devices[0].peak_flops * none.model.efficiency, tp)
            .seconds(2);
    EXPECT_NEAR(iteration("FULL") - iteration("NONE"), 3 * block_forward, 1e-9) << "T=" << tp;
    EXPECT_GT(iteration("SELECTIVE"), iteration("NONE"));
    EXPECT_LT(iteration("SELECTIVE"), iteration("FULL"));
  }
}

TEST(ActivationRecompute, SimgridReproducesAnalyticTimestamps) {
  for (const std::string recompute : {"SELECTIVE", "FULL"}) {
    ResolvedScenario setup =
        gpt(2, 4, 2, recompute, {"training.data_parallel=2", "training.global_batch=16"});
    SCOPED_TRACE(recompute);
    testing::expect_exact_simgrid_equals_analytic(setup);
  }
}

// A 70B GPT (80 blocks of hidden 8192, 64 heads, 4096-token sequences) split TP 4 x PP 16
// keeps 16 microbatches' activations on its first stage: 137 GiB without recomputation,
// within 80 GB with either kind (the GPT keeps its s x s attention scores: the attention
// core is most of a block's stash).
TEST(ActivationRecomputeCli, ADeepPipelineThatDoesNotFitFitsWithRecomputation) {
  const std::string base =
      "simulate builtin:gpt-8gpu-1f1b --set cluster.nodes=8 --set model.zoo.layers=80 "
      "--set model.zoo.hidden=8192 --set model.zoo.seq_len=4096 --set model.zoo.heads=64 "
      "--set model.zoo.vocab=32000 --set training.precision=BF16 "
      "--set training.mixed_precision=true --set training.sequence_parallel=true "
      "--set training.global_batch=128 --set training.microbatches=128 "
      "--set training.tensor_parallel=4 --set schedule.stages=16";
  const testing::CliResult none = testing::run_pipetwin(base);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("runs out of memory"));
  for (const std::string recompute : {"SELECTIVE", "FULL"}) {
    const testing::CliResult r =
        testing::run_pipetwin(base + " --set training.recompute=" + recompute);
    EXPECT_EQ(r.exit_code, 0) << recompute << r.err;
  }
}

TEST(ActivationRecomputeCli, BadSettingsNameTheField) {
  const testing::CliResult mlp =
      testing::run_pipetwin("simulate builtin:mlp-cpu-2rank --set training.recompute=FULL");
  EXPECT_EQ(mlp.exit_code, 2);
  EXPECT_THAT(mlp.err, HasSubstr("training.recompute"));
  EXPECT_THAT(mlp.err, HasSubstr("this model has none"));
  const testing::CliResult unknown =
      testing::run_pipetwin("simulate builtin:gpt-8gpu-1f1b --set training.recompute=SOMETIMES");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("training.recompute"));
}

}  // namespace
}  // namespace pipetwin
