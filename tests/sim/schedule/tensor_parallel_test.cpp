// Tensor parallelism: with free links a stage split T ways runs T times faster; each pass
// all-reduces Megatron's bytes (2 per block each way, s x h 16-bit values per sample, one
// more for the embedding forward and the head backward), sequence parallelism the same
// bytes; weights and stashes per GPU follow Korthikanti et al.'s formulas; a model that
// does not fit on a pipeline fits with TP; the simgrid engine reproduces the analytic
// timestamps; bad settings name their field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "cli_runner.h"
#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/make_timeline.h"
#include "sim/exec/memory_curve.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/simgrid/simgrid_executor.h"
#include "small_gpt.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

// testing::small_gpt, with the links made free when asked.
ResolvedScenario gpt(int stages, int blocks, int microbatches, int tp, bool free_links,
                     std::vector<std::string> more = {}) {
  ResolvedScenario setup = testing::small_gpt(stages, blocks, microbatches, tp, more);
  if (free_links) {
    setup.cluster.intra_node = {1e30, 0};
    setup.cluster.inter_node = {1e30, 0};
    setup.cluster.collectives.model = CollectivesSpec::Model::kTextbook;  // no NCCL latencies
  }
  return setup;
}

double makespan(const ExecutionTimes& t) {
  return *std::max_element(t.end_s.begin(), t.end_s.end());
}

TEST(TensorParallel, WithFreeLinksAStageSplitTWaysRunsTTimesFaster) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 12; ++trial) {
    const int stages = std::uniform_int_distribution<int>(1, 4)(rng);
    const int blocks = stages * std::uniform_int_distribution<int>(1, 3)(rng);
    const int microbatches = std::uniform_int_distribution<int>(1, 8)(rng);
    const int tp = 1 << std::uniform_int_distribution<int>(1, 3)(rng);
    const ResolvedScenario one = gpt(stages, blocks, microbatches, 1, true);
    const ResolvedScenario split = gpt(stages, blocks, microbatches, tp, true);
    const Program p1 = build_program(one), pt = build_program(split);
    EXPECT_EQ(pt.num_devices, p1.num_devices * tp);
    const double t1 = makespan(run_analytic(p1, one.cluster));
    const double tt = makespan(run_analytic(pt, split.cluster));
    EXPECT_NEAR(tt, t1 / tp, 1e-9 * t1) << "K=" << stages << " T=" << tp;
  }
}

// Per FWD and BWD of a stage: 2 all-reduces per block, +1 forward with the embedding, +1
// backward with the head, each of s x h x 2 bytes per sample, among the stage's T GPUs
// (consecutive devices of one node).
TEST(TensorParallel, CollectiveBytesPerPassAreMegatronsCounts) {
  const int stages = 2, blocks = 4, tp = 4;
  for (const bool sequence_parallel : {false, true}) {
    const ResolvedScenario setup =
        gpt(stages, blocks, 4, tp, false,
            {"schedule.partition=[3,3]",
             sequence_parallel ? "training.sequence_parallel=true" : "training.iterations=1"});
    const Program p = build_program(setup);
    const double per_collective = 256.0 * 1024 * 2 * 2;  // s h, 16-bit, 2 samples
    int reductions = 0;
    for (int32_t i = 0; i < p.size(); ++i) {
      const Instruction& ins = p.instructions[i];
      if (ins.op != Op::kAllreduce) continue;
      ++reductions;
      // The pass it reduces: the compute op it waits for on its device.
      const Instruction* pass = nullptr;
      for (int32_t d : p.deps_of(i)) {
        if (p.instructions[d].lane() == Lane::kCompute) pass = &p.instructions[d];
      }
      ASSERT_NE(pass, nullptr) << p.describe(i);
      const int per_stage = blocks / stages;
      int expected = 2 * per_stage;
      if (pass->op == Op::kFwd && pass->stage == 0) ++expected;           // embedding
      if (pass->op == Op::kBwd && pass->stage == stages - 1) ++expected;  // head
      EXPECT_EQ(ins.collectives, expected) << p.describe(i);
      EXPECT_EQ(ins.bytes, std::llround(expected * per_collective)) << p.describe(i);
      const auto members = p.members_of_group(p.group[i]);
      ASSERT_EQ(static_cast<int>(members.size()), tp);
      for (int32_t m : members) EXPECT_EQ(p.instructions[m].device / tp, ins.device / tp);
    }
    EXPECT_EQ(reductions, tp * stages * 4 * 2);  // every GPU, stage, microbatch, direction
  }
}

// Weights, gradients and optimizer state per GPU are 1/T of the stage's; a block's stash is
// sh(10 + 24/T + 5as/(hT)) per sample, and sh(34 + 5as/h)/T with sequence parallelism.
TEST(TensorParallel, WeightsAndStashesPerGpuFollowTheFormulas) {
  const int stages = 2, blocks = 4, tp = 4;
  const std::string halves = "schedule.partition=[3,3]";  // embedding + 2 blocks; 2 + head
  const Program one = build_program(gpt(stages, blocks, 2, 1, false, {halves}));
  const Program split = build_program(gpt(stages, blocks, 2, tp, false, {halves}));
  const Program sp =
      build_program(gpt(stages, blocks, 2, tp, false, {halves, "training.sequence_parallel=true"}));
  for (int s = 0; s < stages; ++s) {
    for (int t = 0; t < tp; ++t) {
      EXPECT_NEAR(split.static_bytes[s * tp + t], static_cast<double>(one.static_bytes[s]) / tp,
                  2 * blocks);
    }
  }
  const double s = 256, h = 1024, a = 16, samples = 2;
  const double block_stash = s * h * (34 + 5 * a * s / h);
  // Stage 0's forward keeps the embedding's token ids (8 bytes each, which every GPU needs
  // whole unless the sequence is split) and two blocks' stashes.
  const auto stage0_forward_stash = [&](const Program& p) {
    for (const Instruction& ins : p.instructions) {
      if (ins.op == Op::kFwd && ins.stage == 0) return ins.stash_bytes;
    }
    return int64_t{-1};
  };
  const double ids = s * 8;
  EXPECT_NEAR(stage0_forward_stash(one), samples * (ids + 2 * block_stash), 2);
  EXPECT_NEAR(stage0_forward_stash(split),
              samples * (ids + 2 * (10 * s * h + (block_stash - 10 * s * h) / tp)), 2);
  EXPECT_NEAR(stage0_forward_stash(sp), samples * (ids + 2 * block_stash) / tp, 2);
}

TEST(TensorParallel, SimgridReproducesAnalyticTimestamps) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 6; ++trial) {
    const int stages = std::uniform_int_distribution<int>(1, 3)(rng);
    const int tp = 1 << std::uniform_int_distribution<int>(1, 2)(rng);
    const char* kinds[] = {"ONE_F_ONE_B", "GPIPE", "PIPEDREAM_2BW"};
    ResolvedScenario setup = gpt(stages, 2 * stages, 4, tp, false,
                                 {std::string("schedule.kind=") + kinds[trial % 3],
                                  "training.data_parallel=2", "training.global_batch=16"});
    SCOPED_TRACE("trial " + std::to_string(trial));
    testing::expect_exact_simgrid_equals_analytic(setup);
  }
}

// Megatron-LM's asynchronous all-reduce (training.tensor_parallel_grad_overlap): a BWD's
// column-parallel input-gradient collectives start under its last share of compute, the
// weight gradients of QKV, the first MLP matmul and the logits (14sh^2 per block, 2shV for
// the head, against a backward of twice the forward's FLOPs, three times a block's with full
// recomputation); sequence parallelism hides only the reduce-scatter of each pair; full
// recomputation's rerun forward all-reduces stay after the pass. The engine then waits only
// for what outlasts the lead.
TEST(TensorParallel, GradOverlapRunsInputGradientReducesUnderTheWeightGradients) {
  const double s = 256, h = 1024, v = 8192, blocks = 2, tp = 2;
  const double block_fwd = 24 * s * h * h + 4 * s * s * h, head_fwd = 2 * s * h * v;
  const double per_collective = s * h * 2 * 2;  // 16-bit, 2 samples
  struct Case {
    std::string set;
    double block_bwd_over_fwd;
    std::vector<std::pair<Op, int>> reduces;  // op and collectives, in lane order
  };
  const std::vector<Case> cases = {
      {"training.iterations=1", 2, {{Op::kAllreduce, 5}}},
      {"training.sequence_parallel=true", 2, {{Op::kReduceScatter, 5}, {Op::kAllGather, 5}}},
      {"training.recompute=FULL", 3, {{Op::kAllreduce, 5}, {Op::kAllreduce, 4}}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.set);
    // Textbook rings, whose reduce-scatter and all-gather together cost an all-reduce.
    const std::string rings = "cluster.collectives.model=TEXTBOOK";
    const ResolvedScenario setup =
        gpt(1, 2, 1, tp, false, {c.set, "training.tensor_parallel_grad_overlap=true", rings});
    const ResolvedScenario plain = gpt(1, 2, 1, tp, false, {c.set, rings});
    const Program p = build_program(setup), q = build_program(plain);
    const ExecutionTimes t = run_analytic(p, setup.cluster), u = run_analytic(q, plain.cluster);
    const auto bwd_and_its_collectives = [](const Program& program) {
      std::vector<int32_t> found;
      for (int32_t i = 0; i < program.size(); ++i) {
        if (program.instructions[i].op == Op::kBwd && program.instructions[i].device == 0) {
          found.push_back(i);
        }
      }
      for (int32_t i = 0; i < program.size(); ++i) {
        const auto deps = program.deps_of(i);
        if (is_collective(program.instructions[i].op) &&
            std::find(deps.begin(), deps.end(), found.front()) != deps.end()) {
          found.push_back(i);
        }
      }
      return found;
    };
    const std::vector<int32_t> ours = bwd_and_its_collectives(p);
    const std::vector<int32_t> theirs = bwd_and_its_collectives(q);
    ASSERT_EQ(ours.size(), c.reduces.size() + 1);
    ASSERT_EQ(theirs.size(), 2u);
    const int32_t bwd = ours[0];
    const double share = (blocks * 14 * s * h * h + 2 * s * h * v) /
                         (blocks * c.block_bwd_over_fwd * block_fwd + 2 * head_fwd);
    const double lead = share * p.instructions[bwd].compute_s;
    double waited = 0;
    for (size_t k = 0; k < c.reduces.size(); ++k) {
      const int32_t r = ours[k + 1];
      const Instruction& ins = p.instructions[r];
      EXPECT_EQ(ins.op, c.reduces[k].first) << k;
      EXPECT_EQ(ins.collectives, c.reduces[k].second) << k;
      EXPECT_EQ(ins.bytes, std::llround(c.reduces[k].second * per_collective)) << k;
      const double took = t.end_s[r] - t.start_s[r];
      if (k == 0) {
        EXPECT_NEAR(ins.lead_s, lead, 1e-9 * lead);
        EXPECT_NEAR(t.start_s[r], t.end_s[bwd] - lead, 1e-12);
        waited += std::max(0.0, took - lead);
      } else {
        EXPECT_EQ(ins.lead_s, 0);
        waited += took;
      }
    }
    // The plain BWD's one all-reduce of every collective waited whole; the step is shorter
    // by the difference.
    const double plain_wait = u.end_s[theirs[1]] - u.start_s[theirs[1]];
    EXPECT_GT(plain_wait, waited);
    EXPECT_NEAR(makespan(u) - makespan(t), plain_wait - waited, 1e-9 * makespan(u));
  }
}

TEST(TensorParallel, SimgridReproducesAnalyticTimestampsUnderGradOverlap) {
  for (const char* sp : {"false", "true"}) {
    ResolvedScenario setup = gpt(2, 4, 4, 4, false,
                                 {"training.tensor_parallel_grad_overlap=true",
                                  std::string("training.sequence_parallel=") + sp,
                                  "training.data_parallel=2", "training.global_batch=16"});
    testing::expect_exact_simgrid_equals_analytic(setup);
  }
}

// GPU t + T(p + P r) is tensor rank t of pipeline device p in replica r, and says so in the
// report and the trace.
TEST(TensorParallel, DeviceNamesSayTheirTensorPipelineAndDataParallelRanks) {
  const ResolvedScenario setup =
      gpt(2, 4, 4, 2, false, {"training.data_parallel=2", "training.global_batch=16"});
  const Program program = build_program(setup);
  const ExecutionTimes times = run_analytic(program, setup.cluster);
  const Timeline timeline =
      make_timeline(program, setup.cluster, times, memory_curve(program, times), "analytic");
  ASSERT_EQ(timeline.devices.size(), 8u);
  EXPECT_EQ(timeline.devices[0].name, "gpu0 (tp 0, pp 0, dp 0)");
  EXPECT_EQ(timeline.devices[1].name, "gpu1 (tp 1, pp 0, dp 0)");
  EXPECT_EQ(timeline.devices[2].name, "gpu2 (tp 0, pp 1, dp 0)");
  EXPECT_EQ(timeline.devices[7].name, "gpu7 (tp 1, pp 1, dp 1)");
  const ResolvedScenario plain = gpt(2, 4, 4, 1, false);
  const Program pipeline = build_program(plain);
  const ExecutionTimes plain_times = run_analytic(pipeline, plain.cluster);
  EXPECT_EQ(make_timeline(pipeline, plain.cluster, plain_times, memory_curve(pipeline, plain_times),
                          "analytic")
                .devices[1]
                .name,
            "gpu1");
}

TEST(TensorParallelCli, AModelThatDoesNotFitOnAPipelineFitsWithTp) {
  const std::string base =
      "simulate builtin:gpt-8gpu-1f1b --set model.zoo.layers=96 "
      "--set model.zoo.hidden=12288 --set model.zoo.heads=96 "
      "--set cluster.nodes=8 --set training.microbatches=8 "
      "--set training.global_batch=8";
  const testing::CliResult alone = testing::run_pipetwin(base);
  EXPECT_EQ(alone.exit_code, 1);
  EXPECT_THAT(alone.err, HasSubstr("runs out of memory"));
  const testing::CliResult split =
      testing::run_pipetwin(base + " --set training.tensor_parallel=8");
  EXPECT_EQ(split.exit_code, 0) << split.err;
}

TEST(TensorParallelCli, BadSettingsNameTheField) {
  const struct {
    std::string set, problem;
  } cases[] = {
      {"training.tensor_parallel=3", "must divide the NVLink domain's 8"},
      {"training.tensor_parallel=0", "must be positive"},
      {"training.sequence_parallel=true", "set training.tensor_parallel above 1"},
  };
  for (const auto& c : cases) {
    const testing::CliResult r = testing::run_pipetwin(
        "simulate builtin:gpt-8gpu-1f1b --set schedule.stages=2 --set " + c.set);
    EXPECT_EQ(r.exit_code, 2) << c.set;
    EXPECT_THAT(r.err, HasSubstr(c.problem)) << c.set;
  }
  const testing::CliResult vgg = testing::run_pipetwin(
      "simulate builtin:vgg16-cpu-2rank --set schedule.stages=1 --set training.tensor_parallel=2");
  EXPECT_THAT(vgg.err, HasSubstr("only transformer and MLP layers split"));
  const testing::CliResult odd = testing::run_pipetwin(
      "simulate builtin:mlp-cpu-2rank --set schedule.stages=1 --set training.tensor_parallel=2 "
      "--set model.zoo.layers=3");
  EXPECT_THAT(odd.err, HasSubstr("model.zoo.layers must be even"));
}

}  // namespace
}  // namespace pipetwin
