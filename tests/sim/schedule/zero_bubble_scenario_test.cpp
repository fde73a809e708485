// Zero-bubble schedules from scenarios: the split of explicit layers and of the zoo's GPT,
// tensor and data parallelism (B carries BWD's all-reduces, W none; SimGrid's exact mode
// reproduces the analytic timestamps) and the settings they refuse, with exit code 2 and
// the field named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <tuple>

#include "cli_runner.h"
#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/driver/pipeline_pass_costs.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/schedule/zero_bubble_auto.h"
#include "sim/simgrid/simgrid_executor.h"
#include "sim/tune/fast_estimate.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

ResolvedScenario resolved(const std::string& scenario, std::vector<std::string> overrides) {
  return resolve_scenario(load_scenario(scenario, overrides));
}

double makespan(const ExecutionTimes& t) {
  return *std::max_element(t.end_s.begin(), t.end_s.end());
}

// builtin:uniform: two stages of fwd 1 ms, bwd 2 ms, free transfers, 8 microbatches.
TEST(ZeroBubbleScenario, ExplicitLayersSplitTheirBackwardInHalvesByDefault) {
  const ResolvedScenario setup = resolved("builtin:uniform", {"schedule.kind=ZB_H1"});
  const Program p = build_program(setup);
  // M(F+B+W) + (K-1)(F+B-W) = 8 x 3 + 1 x 1 ms.
  EXPECT_NEAR(makespan(run_analytic(p, setup.cluster)), 25e-3, 1e-12);
  for (const Instruction& ins : p.instructions) {
    if (ins.op == Op::kBwdInput || ins.op == Op::kBwdWeight) {
      EXPECT_NEAR(ins.compute_s, 1e-3, 1e-15);
    }
  }
}

TEST(ZeroBubbleScenario, ExplicitLayersStateTheirWeightGradient) {
  const ResolvedScenario setup =
      resolved("builtin:uniform", {"schedule.kind=ZB_H1", "model.layers[0].bwd_weight_ms=0.5",
                                   "model.layers[1].bwd_weight_ms=0.5"});
  const Program p = build_program(setup);
  // 8 x 3 + (1 + 1.5 - 0.5) ms.
  EXPECT_NEAR(makespan(run_analytic(p, setup.cluster)), 26e-3, 1e-12);
}

// A GPT block's W is its four linear layers' weight gradients, 24sh^2 of its 48sh^2 + 8s^2h
// backward FLOPs.
TEST(ZeroBubbleScenario, GptBlocksSplitByFlops) {
  const ResolvedScenario setup =
      resolved("builtin:gpt-8gpu-1f1b", {"schedule.kind=ZB_H1", "model.zoo.launch_overhead_us=0",
                                         "model.zoo.utilization_half_batch=0"});
  const ModelLayer& block = setup.model.layers[1];
  ASSERT_TRUE(block.bwd_weight.has_value());
  const double s = setup.zoo->seq_len(), h = setup.zoo->hidden();
  EXPECT_NEAR(block.bwd_weight->flops_per_sample / block.bwd.flops_per_sample,
              24 * s * h * h / (48 * s * h * h + 8 * s * s * h), 1e-12);
  EXPECT_NEAR(*block.bwd_weight_stash_bytes_per_sample, 32 * s * h, 1e-6);
}

ResolvedScenario gpt(proto::ScheduleKind kind, int stages, int microbatches, int tp, int dp) {
  ResolvedScenario setup =
      resolved("builtin:gpt-8gpu-1f1b",
               {"schedule.kind=" + proto::ScheduleKind_Name(kind), "model.zoo.layers=8",
                "model.zoo.hidden=1024", "model.zoo.seq_len=256", "model.zoo.heads=16",
                "model.zoo.vocab=8192", "cluster.gpus_per_node=8", "cluster.nodes=4",
                "schedule.stages=" + std::to_string(stages),
                "training.microbatches=" + std::to_string(microbatches),
                "training.global_batch=" + std::to_string(2 * microbatches * dp),
                "training.tensor_parallel=" + std::to_string(tp),
                "training.data_parallel=" + std::to_string(dp), "training.iterations=2"});
  return setup;
}

// (A W, like every op after a pass on its lane, waits for that pass's all-reduces.)
TEST(ZeroBubbleScenario, TensorParallelAllReducesGoWithTheInputGradient) {
  for (proto::ScheduleKind kind : {proto::ZB_H1, proto::ZB_H2, proto::ZB_V, proto::ZB_AUTO}) {
    const Program p = build_program(gpt(kind, 2, 4, 2, 1));
    int with_input = 0;
    for (int32_t i = 0; i < p.size(); ++i) {
      if (p.instructions[i].op != Op::kAllreduce) continue;
      for (int32_t d : p.deps_of(i)) {
        EXPECT_NE(p.instructions[d].op, Op::kBwdWeight) << p.describe(i);
        with_input += p.instructions[d].op == Op::kBwdInput;
      }
    }
    EXPECT_GT(with_input, 0) << proto::ScheduleKind_Name(kind);
  }
}

TEST(ZeroBubbleScenario, SimgridExactReproducesAnalyticWithTensorAndDataParallelism) {
  for (proto::ScheduleKind kind : {proto::ZB_H1, proto::ZB_H2, proto::ZB_V, proto::ZB_AUTO}) {
    for (const auto& [tp, dp] : {std::pair{2, 1}, std::pair{1, 2}, std::pair{2, 2}}) {
      ResolvedScenario setup = gpt(kind, 2, 5, tp, dp);
      SCOPED_TRACE(proto::ScheduleKind_Name(kind) + " tp " + std::to_string(tp) + " dp " +
                   std::to_string(dp));
      testing::expect_exact_simgrid_equals_analytic(setup);
    }
  }
}

// The update waits for every W of its stage: with data parallelism through the ALLREDUCE.
TEST(ZeroBubbleScenario, UpdateWaitsForEveryWeightGradient) {
  for (proto::ScheduleKind kind : {proto::ZB_H1, proto::ZB_H2, proto::ZB_V, proto::ZB_AUTO}) {
    for (int dp : {1, 2}) {
      const ResolvedScenario setup = gpt(kind, 2, 5, 1, dp);
      const Program p = build_program(setup);
      const ExecutionTimes t = run_analytic(p, setup.cluster);
      for (int32_t i = 0; i < p.size(); ++i) {
        const Instruction& w = p.instructions[i];
        if (w.op != Op::kBwdWeight) continue;
        for (int32_t j = 0; j < p.size(); ++j) {
          const Instruction& u = p.instructions[j];
          if ((u.op == Op::kOptim || u.op == Op::kAllreduce) && u.stage == w.stage &&
              u.iteration == w.iteration && u.device == w.device) {
            // A gradient bucket may start its lead before the weight gradients end.
            EXPECT_GE(t.start_s[j] + u.lead_s + 1e-12, t.end_s[i])
                << p.describe(j) << " before " << p.describe(i);
          }
        }
      }
    }
  }
}

TEST(ZeroBubbleScenario, BadSettingsNameTheField) {
  const struct {
    std::string scenario, set, field, problem;
  } cases[] = {
      {"builtin:gpt-8gpu-1f1b", "schedule.kind=ZB_V --set schedule.virtual_stages=3",
       "schedule.virtual_stages", "leave it unset or give 2"},
      {"builtin:gpt-8gpu-1f1b", "schedule.kind=ZB_H1 --set schedule.virtual_stages=2",
       "schedule.virtual_stages", "only INTERLEAVED_ONE_F_ONE_B and ZB_V"},
      {"builtin:offload-gpt-a100", "schedule.kind=ZB_H2 --set schedule.offload.policy=ALL",
       "schedule.offload", "does not offload"},
      {"builtin:freezepipe-gpt-8gpu", "schedule.kind=ZB_H1", "freeze", "does not freeze"},
      {"builtin:uniform", "schedule.kind=ZB_H1 --set model.layers[0].bwd_weight_ms=3",
       "model.layers[0].bwd_weight_ms", "exceeds bwd_ms"},
      {"builtin:uniform", "schedule.kind=ZB_H1 --set model.layers[1].bwd_weight_fixed_ms=1",
       "model.layers[1].bwd_weight_fixed_ms", "goes with bwd_fixed_ms"},
      {"builtin:uniform", "schedule.kind=ZB_H1 --set model.layers[0].bwd_weight_stash_bytes=5",
       "model.layers[0].bwd_weight_stash_bytes", "exceeds the layer's stash"},
  };
  for (const auto& c : cases) {
    const testing::CliResult r =
        testing::run_pipetwin("simulate " + c.scenario + " --set " + c.set);
    EXPECT_EQ(r.exit_code, 2) << c.set << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.field)) << c.set;
    EXPECT_THAT(r.err, HasSubstr(c.problem)) << c.set;
  }
}

TEST(ZeroBubbleScenario, SimulateRunsEveryKindFromTheCommandLine) {
  for (const char* kind : {"ZB_H1", "ZB_H2", "ZB_V"}) {
    const testing::CliResult r = testing::run_pipetwin(
        std::string("simulate builtin:gpt-8gpu-1f1b --json --allow-oom --set schedule.kind=") +
        kind);
    EXPECT_EQ(r.exit_code, 0) << kind << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("\"iteration_time_s\"")) << kind;
  }
}

// Full recomputation under the zero-bubble schedules: a forward keeps only its blocks'
// checkpoints; B reruns the forward (its time is B's plus F's) and rebuilds the activations W
// needs, holding them until W; W computes and frees exactly what it held without
// recomputation. Selective recomputation keeps W's share and frees the attention core in B.
TEST(ZeroBubbleScenario, RecomputationHoldsWhatWNeedsFromBToW) {
  for (const char* kind : {"ZB_H1", "ZB_V", "ZB_AUTO"}) {
    SCOPED_TRACE(kind);
    const std::vector<std::string> schedule = {std::string("schedule.kind=") + kind,
                                               "schedule.stages=2"};
    std::vector<std::string> full = schedule;
    full.push_back("training.recompute=FULL");
    const ResolvedScenario plain_setup = resolved("builtin:gpt-8gpu-1f1b", schedule);
    ResolvedScenario recomputed_setup = resolved("builtin:gpt-8gpu-1f1b", full);
    recomputed_setup.schedule.partition = place_layers(plain_setup);  // the same layers
    // Each pass by what it is: op, stage, microbatch, iteration.
    using Key = std::tuple<Op, int32_t, int32_t, int32_t>;
    const auto passes = [](const Program& p) {
      std::map<Key, Instruction> by_key;
      for (const Instruction& ins : p.instructions) {
        if (is_pass(ins.op)) by_key[{ins.op, ins.stage, ins.microbatch, ins.iteration}] = ins;
      }
      return by_key;
    };
    const auto plain = passes(build_program(plain_setup));
    const auto recomputed = passes(build_program(recomputed_setup));
    ASSERT_EQ(plain.size(), recomputed.size());
    int rebuilt = 0;
    for (const auto& [key, a] : plain) {
      const Instruction& b = recomputed.at(key);
      const auto [op, stage, microbatch, iteration] = key;
      const Instruction& fwd = plain.at({Op::kFwd, stage, microbatch, iteration});
      switch (op) {
        case Op::kFwd:
          EXPECT_LT(b.stash_bytes, a.stash_bytes);
          break;
        case Op::kBwdWeight:
          EXPECT_EQ(b.stash_bytes, a.stash_bytes);
          EXPECT_NEAR(b.compute_s, a.compute_s, 1e-12);
          break;
        case Op::kBwdInput: {
          // The blocks rerun their forward (the embedding and the head keep their
          // activations), at most the whole forward's time more.
          EXPECT_GT(b.compute_s, a.compute_s);
          EXPECT_LE(b.compute_s, a.compute_s + fwd.compute_s + 1e-12);
          const int64_t checkpoint =
              recomputed.at({Op::kFwd, stage, microbatch, iteration}).stash_bytes;
          const int64_t weight_share =
              plain.at({Op::kBwdWeight, stage, microbatch, iteration}).stash_bytes;
          EXPECT_EQ(b.stash_bytes, checkpoint - weight_share);
          rebuilt += b.stash_bytes < 0;
          break;
        }
        default:
          break;
      }
    }
    EXPECT_GT(rebuilt, 0) << "B holds more than the checkpoint when it ends";
  }
}

// ZB_AUTO's memory limit counts what one microbatch holds at most, which with full
// recomputation is W's rebuilt share: on the 70B model every limit from 1 microbatch up
// leaves candidates, and the fast evaluator times them as the engine does.
TEST(ZeroBubbleScenario, AutomaticScheduleFindsOrdersUnderRecomputation) {
  for (const char* limit : {"1", "2", "8"}) {
    SCOPED_TRACE(limit);
    const ResolvedScenario setup = resolved(
        "builtin:llama3-70b-1024gpu", {"schedule.kind=ZB_AUTO", "training.recompute=FULL",
                                       std::string("schedule.memory_limit_microbatches=") + limit});
    const PipelineLayout layout = make_layout(setup, place_layers(setup));
    EXPECT_FALSE(zb_auto_candidates(setup.training.microbatches,
                                    linear_pipeline_costs(setup, layout), std::stod(limit))
                     .empty());
    const std::optional<FastEstimate> fast = estimate_fast(setup);
    ASSERT_TRUE(fast.has_value());
    EXPECT_GT(fast->iteration_time_s, 0);
  }
}

}  // namespace
}  // namespace pipetwin
