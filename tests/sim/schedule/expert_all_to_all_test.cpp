// Expert parallelism in the Program: an ALL_TO_ALL after every FWD and input-gradient
// backward of a stage with MoE layers, grouped across the expert group's replicas, carrying
// tokens x top_k x hidden x 2 bytes per all-to-all; with free links it costs nothing, and
// exact SimGrid reproduces the analytic engine's times on random EP x PP x DP runs.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "random_setup.h"
#include "random_trials.h"
#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/simgrid/simgrid_executor.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// A small Mixtral-like model: 4 MoE blocks of hidden 512, 8 experts, top-2, sequence 128, at a
// flat efficiency (GEMM efficiency by shape would time an expert's GEMM by its rows, which
// expert parallelism changes: sim/model/shape_efficiency.h).
ResolvedScenario small_moe(int stages, int replicas, int expert_parallel, const std::string& kind,
                           const std::vector<std::string>& more = {}) {
  std::string text = R"(
    cluster { preset: "dgx-h100" nodes: 4 }
    model { zoo { name: "transformer" layers: 4 hidden: 512 heads: 8 kv_heads: 2 ffn_hidden: 1024
                  seq_len: 128 vocab: 1000 efficiency: 0.5
                  moe { experts: 8 top_k: 2 expert_ffn_hidden: 1024 } } }
    training { global_batch: 64 microbatches: 8 precision: BF16 mixed_precision: true }
    schedule { stages: 2 }
  )";
  std::vector<std::string> overrides = {
      "schedule.stages=" + std::to_string(stages), "schedule.kind=" + kind,
      "training.data_parallel=" + std::to_string(replicas),
      "training.expert_parallel=" + std::to_string(expert_parallel)};
  overrides.insert(overrides.end(), more.begin(), more.end());
  return resolve_scenario(parse_scenario(text, "moe.textproto", "", false, overrides));
}

TEST(ExpertAllToAll, EveryPassOfAnMoeStageExchangesItsTokens) {
  const ResolvedScenario setup = small_moe(2, 4, 2, "ONE_F_ONE_B");
  const Program p = build_program(setup);
  const double tokens_per_sample = 128, top_k = 2, hidden = 512;
  std::map<int32_t, int> per_group;
  int exchanges = 0;
  for (int32_t i = 0; i < p.size(); ++i) {
    const Instruction& ins = p.instructions[i];
    if (ins.op != Op::kAllToAll) continue;
    ++exchanges;
    ++per_group[p.group[i]];
    // Each all-to-all sends tokens x top_k x hidden 16-bit values; this op holds one
    // dispatch and one combine for each of the stage's MoE blocks.
    const int blocks = ins.collectives / 2;
    EXPECT_GE(blocks, 1);
    EXPECT_EQ(ins.bytes, static_cast<int64_t>(ins.range.size() * tokens_per_sample * top_k *
                                              hidden * 2 * 2 * blocks));
    // Its group: the same stage on replicas {0,1} or {2,3}.
    std::set<int32_t> replicas;
    for (int32_t m : p.members_of_group(p.group[i])) {
      EXPECT_EQ(p.instructions[m].stage, ins.stage);
      replicas.insert(p.instructions[m].device / 2);
    }
    EXPECT_TRUE(replicas == std::set<int32_t>({0, 1}) || replicas == std::set<int32_t>({2, 3}));
  }
  // 4 replicas x 2 stages x 8 microbatches x (forward + backward).
  EXPECT_EQ(exchanges, 4 * 2 * 8 * 2);
  for (const auto& [group, members] : per_group) EXPECT_EQ(members, 2);
}

// Expert gradients sum over the replicas that hold the same experts (the expert-data-parallel
// group, D / E of them), the other gradients over all D: two ALLREDUCEs per stage whose
// bytes add up to the stage's gradients; with D = E the experts need no all-reduce at all.
TEST(ExpertAllToAll, ExpertGradientsReduceOverTheReplicasHoldingThem) {
  for (const int replicas : {2, 4}) {
    const ResolvedScenario setup = small_moe(2, replicas, 2, "ONE_F_ONE_B");
    const Program p = build_program(setup);
    std::vector<int32_t> layers_per_chunk;
    for (const auto& [first, last] : chunk_layer_ranges(setup)) {
      layers_per_chunk.push_back(last - first);
    }
    const PipelineLayout layout = make_layout(setup, layers_per_chunk);
    std::map<int32_t, int64_t> bytes_per_device_stage;
    int dense = 0, experts = 0;
    for (int32_t i = 0; i < p.size(); ++i) {
      const Instruction& ins = p.instructions[i];
      if (ins.op != Op::kAllreduce) continue;
      bytes_per_device_stage[ins.device * 2 + ins.stage] += ins.bytes;
      std::set<int32_t> holders;  // the members' replicas
      for (int32_t m : p.members_of_group(p.group[i])) {
        EXPECT_EQ(p.instructions[m].stage, ins.stage);
        holders.insert(p.instructions[m].device / 2);
      }
      const StageCost& cost = layout.costs[ins.stage];
      if (static_cast<int>(holders.size()) == replicas) {
        ++dense;
        EXPECT_EQ(ins.bytes, cost.gradient_bytes - cost.expert_gradient_bytes);
      } else {
        ++experts;
        EXPECT_EQ(ins.bytes, cost.expert_gradient_bytes);
        EXPECT_EQ(static_cast<int>(holders.size()), replicas / 2);
        for (int32_t r : holders) EXPECT_EQ(r % 2, ins.device / 2 % 2);  // same experts
      }
    }
    EXPECT_EQ(dense, replicas * 2);
    EXPECT_EQ(experts, replicas == 2 ? 0 : replicas * 2);
    for (int s = 0; s < 2; ++s) EXPECT_GT(layout.costs[s].expert_gradient_bytes, 0);
    if (replicas == 4) {
      for (const auto& [key, bytes] : bytes_per_device_stage) {
        EXPECT_EQ(bytes, layout.costs[key % 2].gradient_bytes);
      }
    }
  }
}

// Tensor parallelism copies each all-to-all onto the stage's T GPUs, each group among the
// GPUs of one tensor rank; the gradient all-reduce that waits for the last backward's
// all-to-all stays behind it on the lane (and exact SimGrid agrees with the analytic times).
TEST(ExpertAllToAll, WithTensorParallelismEachTensorRankExchangesItsShare) {
  ResolvedScenario setup = small_moe(
      2, 2, 2, "ONE_F_ONE_B", {"training.tensor_parallel=2", "training.sequence_parallel=true"});
  setup.simgrid.exact = true;
  const Program p = build_program(setup);
  int exchanges = 0;
  for (int32_t i = 0; i < p.size(); ++i) {
    if (p.instructions[i].op != Op::kAllToAll) continue;
    ++exchanges;
    for (int32_t m : p.members_of_group(p.group[i])) {
      EXPECT_EQ(p.instructions[m].device % 2, p.instructions[i].device % 2);  // one tensor rank
      EXPECT_EQ(p.instructions[m].bytes, p.instructions[i].bytes);
    }
  }
  EXPECT_EQ(exchanges, 2 * 2 * 2 * 8 * 2);  // tensor ranks x stages x replicas x mb x passes
  testing::expect_same_times(p, run_analytic(p, setup.cluster),
                             run_simgrid(p, setup.cluster, setup.simgrid));
}

TEST(ExpertAllToAll, NoneWithoutExpertParallelism) {
  const Program p = build_program(small_moe(2, 4, 1, "ONE_F_ONE_B"));
  for (const Instruction& ins : p.instructions) EXPECT_NE(ins.op, Op::kAllToAll);
}

// Links so fast and close that the all-to-alls take no time: EP changes nothing but the
// expert weights each GPU holds.
TEST(ExpertAllToAll, FreeLinksMakeExpertParallelismCostNothing) {
  const std::vector<std::string> free_links = {
      "cluster.intra_node.bandwidth_gbytes_per_s=1e12", "cluster.intra_node.latency_us=0",
      "cluster.inter_node.bandwidth_gbytes_per_s=1e12", "cluster.inter_node.latency_us=0",
      "cluster.collectives.model=TEXTBOOK"};  // NCCL's model keeps its software latencies
  // DualPipe with free all-to-alls is DualPipe without experts spread.
  for (const char* kind : {"ONE_F_ONE_B", "DUALPIPE"}) {
    const ResolvedScenario one = small_moe(2, 4, 1, kind, free_links);
    const ResolvedScenario four = small_moe(2, 4, 4, kind, free_links);
    const Program p1 = build_program(one), p4 = build_program(four);
    EXPECT_NEAR(run_analytic(p4, four.cluster).span_s(), run_analytic(p1, one.cluster).span_s(),
                1e-9)
        << kind;
  }
  const ResolvedScenario one = small_moe(2, 4, 1, "ONE_F_ONE_B", free_links);
  const ResolvedScenario four = small_moe(2, 4, 4, "ONE_F_ONE_B", free_links);
  // Per GPU, the experts' weights (and with them gradients and optimizer state) shrink by 4
  // exactly; the rest of each block stays whole.
  int moe_layers = 0;
  for (size_t l = 0; l < one.model.layers.size(); ++l) {
    const int64_t experts = one.model.layers[l].moe.expert_parameter_bytes;
    if (experts == 0) continue;
    ++moe_layers;
    EXPECT_EQ(one.model.layers[l].parameter_bytes - four.model.layers[l].parameter_bytes,
              experts - experts / 4);
  }
  EXPECT_EQ(moe_layers, 4);
}

// The share of the all-to-alls' time during which their device computed.
double hidden_share(const Program& p, const ExecutionTimes& t) {
  double total = 0, hidden = 0;
  for (int32_t i = 0; i < p.size(); ++i) {
    if (p.instructions[i].op != Op::kAllToAll) continue;
    total += t.end_s[i] - t.start_s[i];
    for (int32_t j = 0; j < p.size(); ++j) {
      if (p.instructions[j].device != p.instructions[i].device ||
          p.instructions[j].lane() != Lane::kCompute) {
        continue;
      }
      hidden +=
          std::max(0.0, std::min(t.end_s[i], t.end_s[j]) - std::max(t.start_s[i], t.start_s[j]));
    }
  }
  return total > 0 ? hidden / total : 0;
}

// 1F1B waits for every all-to-all; DualPipe runs the next chunk under it (DeepSeek-V3's F&B
// overlap), so where compute outlasts it, most of it hides.
TEST(ExpertAllToAll, DualPipeHidesTheAllToAllsThatOneFOneBWaitsFor) {
  const std::vector<std::string> slow_gpu = {"model.zoo.efficiency=0.02"};
  const ResolvedScenario one_f_one_b = small_moe(4, 2, 2, "ONE_F_ONE_B", slow_gpu);
  const ResolvedScenario dualpipe = small_moe(4, 2, 2, "DUALPIPE", slow_gpu);
  const Program a = build_program(one_f_one_b), b = build_program(dualpipe);
  const double waited = hidden_share(a, run_analytic(a, one_f_one_b.cluster));
  const double overlapped = hidden_share(b, run_analytic(b, dualpipe.cluster));
  EXPECT_LT(waited, 0.01);
  EXPECT_GT(overlapped, 0.5);
}

// Megatron-Core's overlap_moe_expert_parallel_comm: in 1F1B's steady state a pass's all-to-alls
// run under the next pass of the other direction, most of them hidden; the warm-up's and
// cool-down's consecutive passes of one direction still wait for them.
TEST(ExpertAllToAll, MegatronOverlapHidesTheSteadyStatesAllToAllsOnly) {
  const std::vector<std::string> slow_gpu = {"model.zoo.efficiency=0.02"};
  std::vector<std::string> overlapped = slow_gpu;
  overlapped.push_back("training.overlap_moe_expert_parallel_comm=true");
  for (const char* kind : {"ONE_F_ONE_B", "INTERLEAVED_ONE_F_ONE_B"}) {
    std::vector<std::string> more = overlapped;
    if (std::string(kind) == "INTERLEAVED_ONE_F_ONE_B") more.push_back("schedule.virtual_stages=2");
    const ResolvedScenario plain = small_moe(2, 2, 2, kind, slow_gpu);
    const ResolvedScenario overlap = small_moe(2, 2, 2, kind, more);
    const Program a = build_program(plain), b = build_program(overlap);
    const ExecutionTimes ta = run_analytic(a, plain.cluster), tb = run_analytic(b, overlap.cluster);
    EXPECT_LT(hidden_share(a, ta), 0.01) << kind;
    EXPECT_GT(hidden_share(b, tb), 0.3) << kind;
    EXPECT_LT(tb.span_s(), ta.span_s()) << kind;
    // Each pass's exchange, and the next compute op on its device.
    for (int32_t i = 0; i + 1 < b.size(); ++i) {
      const Instruction& pass = b.instructions[i];
      if (!is_pass(pass.op) || b.lane_index(i + 1) != b.lane_index(i)) continue;
      const Instruction& next = b.instructions[i + 1];
      if (is_backward(next.op) != is_backward(pass.op)) continue;
      for (int32_t x : b.dependents_of(i)) {
        if (b.instructions[x].op == Op::kAllToAll) {
          EXPECT_GE(tb.start_s[i + 1], tb.end_s[x] - 1e-12) << kind << ": " << b.describe(i + 1);
        }
      }
    }
  }
  EXPECT_THROW(small_moe(2, 2, 2, "GPIPE", overlapped), InputError);
}

// DeepSeek-V3's own layout: DualPipe with ZeRO-1. Each of a stage's two copies (one per
// direction) reduce-scatters its gradients over the replicas and copies holding them, steps its
// shard and gathers the weights back; every device keeps less optimizer state, and exact SimGrid
// agrees with the analytic times.
TEST(ExpertAllToAll, DualPipeTrainsWithZeroOneAsDeepSeekV3Does) {
  ResolvedScenario plain = small_moe(4, 4, 2, "DUALPIPE");
  ResolvedScenario sharded = small_moe(4, 4, 2, "DUALPIPE", {"training.zero_stage=1"});
  const Program a = build_program(plain), b = build_program(sharded);
  int scatters = 0, gathers = 0;
  for (const Instruction& ins : b.instructions) {
    scatters += ins.op == Op::kReduceScatter;
    gathers += ins.op == Op::kAllGather;
    EXPECT_NE(ins.op, Op::kAllreduce);
  }
  // Per device: its two chunks, the dense and the experts' gradients of each.
  EXPECT_EQ(scatters, 16 * 2 * 2);
  EXPECT_EQ(gathers, scatters);
  for (int32_t d = 0; d < b.num_devices; ++d) EXPECT_LT(b.static_bytes[d], a.static_bytes[d]);
  sharded.simgrid.exact = true;
  testing::expect_same_times(b, run_analytic(b, sharded.cluster),
                             run_simgrid(b, sharded.cluster, sharded.simgrid));
  EXPECT_THROW(small_moe(4, 4, 2, "DUALPIPE", {"training.zero_stage=2"}), InputError);
}

class ExpertParallelExact : public ::testing::TestWithParam<proto::ScheduleKind> {};

TEST_P(ExpertParallelExact, SimgridReproducesAnalyticTimes) {
  std::mt19937 rng(977 + GetParam());
  for (int trial = 0; trial < testing::random_trials(10); ++trial) {
    ResolvedScenario setup = testing::random_setup(rng, GetParam());
    setup.simgrid.exact = true;
    // Experts on some layers, spread over the replicas' groups.
    const int32_t replicas = setup.training.data_parallel;
    const int32_t ep = replicas == 1 ? 1 : (replicas % 2 == 0 ? 2 : replicas);
    setup.training.expert_parallel = ep;
    for (ModelLayer& layer : setup.model.layers) {
      if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) continue;
      layer.moe.experts = 4 * ep;
      layer.moe.top_k = 2;
      layer.moe.dispatch_bytes_per_sample = std::uniform_real_distribution<double>(1e3, 1e7)(rng);
      layer.ep_fwd_all_to_alls = layer.ep_bwd_all_to_alls = ep > 1 ? 2 : 0;
      // DualPipe's copies of a stage may be pipeline neighbours whose gradient all-reduce
      // contends with the next transfers (exact_mode_test.cpp): no gradients there.
      if (GetParam() == proto::DUALPIPE) layer.parameter_bytes = 0;
    }
    const Program program = build_program(setup);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": EP " + std::to_string(ep) + " of " +
                 std::to_string(replicas) + " replicas, " + std::to_string(program.size()) +
                 " instructions");
    testing::expect_same_times(program, run_analytic(program, setup.cluster),
                               run_simgrid(program, setup.cluster, setup.simgrid));
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, ExpertParallelExact,
                         ::testing::Values(proto::GPIPE, proto::ONE_F_ONE_B, proto::ZB_H1,
                                           proto::DUALPIPE),
                         [](const auto& info) { return proto::ScheduleKind_Name(info.param); });

}  // namespace
}  // namespace pipetwin
