// Context parallelism: C GPUs per sequence take 1/C of the compute and of the stashes with
// free links; ring attention gathers the whole sequence's keys and values per layer and
// pass (each GPU moving (C-1)/C of them), hidden under the attention where the links keep
// up; ALL_GATHER waits for the same bytes; Ulysses all-to-alls the queries, keys, values and
// output; gradients are reduced over data- and context-parallel GPUs together. Exact SimGrid
// equals analytic on random CP x ZeRO x PP x DP Programs.
#include "sim/schedule/context_parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "random_setup.h"
#include "random_trials.h"
#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/make_timeline.h"
#include "sim/exec/memory_curve.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/simgrid/simgrid_executor.h"

namespace pipetwin {
namespace {

using Algorithm = proto::Training::ContextParallelAlgorithm;

// A GPT of four blocks on `stages` stages of one node, whose links are `link`.
ResolvedScenario gpt(int32_t cp, Algorithm algorithm, const LinkSpec& link, int stages = 1,
                     int replicas = 1, int tp = 1) {
  const std::string text = R"(
    name: "cp"
    cluster { preset: "dgx-h100" nodes: 4 }
    model { zoo { name: "gpt" layers: 4 hidden: 2048 seq_len: 8192 heads: 16 vocab: 32000 } }
    training { global_batch: 8 microbatches: 4 precision: BF16 grad_bucket_mb: 0 }
    schedule { kind: ONE_F_ONE_B stages: 1 }
  )";
  ResolvedScenario setup = resolve_scenario(parse_scenario(text, "cp.textproto", "", false, {}));
  setup.training.context_parallel = cp;
  setup.training.context_parallel_algorithm = algorithm;
  setup.training.data_parallel = replicas;
  setup.training.tensor_parallel = tp;
  setup.training.global_batch = 4 * replicas;
  setup.schedule.stages = stages;
  setup.cluster.intra_node = link;
  setup.cluster.inter_node = link;
  setup.cluster.collectives.model = CollectivesSpec::Model::kTextbook;  // the links' closed forms
  return setup;
}

const LinkSpec kFree{1e30, 0};

double iteration_s(const ResolvedScenario& setup) {
  const ExecutionTimes times = run_analytic(build_program(setup), setup.cluster);
  return *std::max_element(times.end_s.begin(), times.end_s.end());
}

std::vector<const Instruction*> of_op(const Program& p, Op op, int32_t device) {
  std::vector<const Instruction*> found;
  for (const Instruction& i : p.instructions) {
    if (i.op == op && i.device == device) found.push_back(&i);
  }
  return found;
}

TEST(ContextParallel, CGpusTakeOneCthOfTheComputeWithFreeLinks) {
  for (int32_t cp : {2, 4, 8}) {
    for (Algorithm algorithm :
         {proto::Training::RING, proto::Training::ALL_GATHER, proto::Training::ULYSSES}) {
      const ResolvedScenario one = gpt(1, algorithm, kFree, 2);
      const ResolvedScenario split = gpt(cp, algorithm, kFree, 2);
      EXPECT_NEAR(iteration_s(split), iteration_s(one) / cp, 1e-9 * iteration_s(one));
      const Program whole = build_program(one), parts = build_program(split);
      EXPECT_EQ(parts.num_devices, cp * whole.num_devices);
      const auto f1 = of_op(whole, Op::kFwd, 0), fc = of_op(parts, Op::kFwd, cp - 1);
      ASSERT_EQ(f1.size(), fc.size());
      for (size_t k = 0; k < f1.size(); ++k) {
        EXPECT_NEAR(fc[k]->compute_s, f1[k]->compute_s / cp, 1e-12);
        EXPECT_EQ(fc[k]->stash_bytes, std::llround(f1[k]->stash_bytes / static_cast<double>(cp)));
      }
    }
  }
}

// DualPipe's two directions split their sequences as 1F1B's one does: with free links C GPUs
// take 1/C of the step; on real links exact SimGrid reproduces the analytic times.
TEST(ContextParallel, DualPipeSplitsItsSequencesToo) {
  for (int32_t cp : {2, 4}) {
    ResolvedScenario one = gpt(1, proto::Training::RING, kFree, 2);
    ResolvedScenario split = gpt(cp, proto::Training::RING, kFree, 2);
    one.schedule.kind = split.schedule.kind = proto::DUALPIPE;
    EXPECT_NEAR(iteration_s(split), iteration_s(one) / cp, 1e-9 * iteration_s(one)) << cp;
  }
  for (Algorithm algorithm : {proto::Training::RING, proto::Training::ULYSSES}) {
    ResolvedScenario setup = gpt(2, algorithm, {100e9, 2e-6}, 2, 2);
    setup.schedule.kind = proto::DUALPIPE;
    setup.simgrid.exact = true;
    const Program program = build_program(setup);
    testing::expect_same_times(program, run_analytic(program, setup.cluster),
                               run_simgrid(program, setup.cluster, setup.simgrid));
  }
}

TEST(ContextParallel, StashesAndActivationsAreOneCthPerGpu) {
  const Program whole = build_program(gpt(1, proto::Training::RING, kFree, 2));
  const Program parts = build_program(gpt(4, proto::Training::RING, kFree, 2));
  const auto s1 = of_op(whole, Op::kSendAct, 0), s4 = of_op(parts, Op::kSendAct, 3);
  ASSERT_FALSE(s1.empty());
  ASSERT_EQ(s1.size(), s4.size());
  EXPECT_EQ(s4[0]->peer_device, 4 + 3);  // GPU c of the next stage
  EXPECT_NEAR(s4[0]->bytes, s1[0]->bytes / 4.0, 1);
  // Weights are whole on every GPU of the sequence.
  EXPECT_EQ(parts.static_bytes[3], whole.static_bytes[0]);
}

// Per layer and pass, a ring gathers the whole sequence's keys and values of the GPU's heads:
// 2 s h bytes per sample for the GPT (16-bit keys and values), C-1 steps of one chunk.
TEST(ContextParallel, TheRingGathersTheWholeSequencesKeysAndValuesPerLayer) {
  for (int32_t tp : {1, 2}) {
    const int32_t cp = 4;
    const ResolvedScenario setup = gpt(cp, proto::Training::RING, {100e9, 1e-6}, 1, 1, tp);
    const Program p = build_program(setup);
    const double kv_per_sample = 2.0 * 8192 * 2048 * 2 / tp;
    const auto gathers = of_op(p, Op::kAllGather, 0);
    const auto scatters = of_op(p, Op::kReduceScatter, 0);
    ASSERT_EQ(gathers.size(), 8u);   // 4 forwards, 4 backwards
    ASSERT_EQ(scatters.size(), 4u);  // the backwards' key and value gradients
    for (const Instruction* g : gathers) {
      EXPECT_EQ(g->collectives, 4);  // one per block
      EXPECT_EQ(g->bytes, std::llround(4 * kv_per_sample * g->range.size()));
      EXPECT_GT(g->lead_s, 0);
    }
    const ExecutionTimes times = run_analytic(p, setup.cluster);
    for (int32_t i = 0; i < p.size(); ++i) {
      const Instruction& g = p.instructions[i];
      if (g.op != Op::kAllGather || g.device != 0) continue;
      // Each of its four rings: C-1 steps of a 1/C chunk of one block's keys and values.
      const double chunk = kv_per_sample * g.range.size() / cp;
      const double ring = 4 * (cp - 1) * (1e-6 + chunk / 100e9);
      EXPECT_NEAR(times.end_s[i] - times.start_s[i], ring, 1e-12);
    }
  }
}

// Where the links move a layer's keys and values faster than its attention computes, the ring
// costs nothing; ALL_GATHER waits for the same exchange.
TEST(ContextParallel, TheRingHidesUnderTheAttentionWhereAllGatherWaits) {
  const LinkSpec fast{900e9, 0};
  // Without weights, nothing but the exchanges uses the links.
  const auto weightless = [](ResolvedScenario setup) {
    for (ModelLayer& layer : setup.model.layers) layer.parameter_bytes = 0;
    return setup;
  };
  const double free_s = iteration_s(weightless(gpt(4, proto::Training::RING, kFree)));
  EXPECT_NEAR(iteration_s(weightless(gpt(4, proto::Training::RING, fast))), free_s, 1e-9 * free_s);
  EXPECT_GT(iteration_s(weightless(gpt(4, proto::Training::ALL_GATHER, fast))),
            free_s * (1 + 1e-6));
}

// Ulysses: before attention each GPU sends its 1/C of the tokens' queries, keys and values,
// after it the output: 4 s h / C bytes per sample for the GPT, two all-to-alls per block.
TEST(ContextParallel, UlyssesAllToAllsTheQueriesKeysValuesAndOutput) {
  const int32_t cp = 4;
  const Program p = build_program(gpt(cp, proto::Training::ULYSSES, {100e9, 1e-6}));
  const auto exchanges = of_op(p, Op::kAllToAll, 0);
  ASSERT_EQ(exchanges.size(), 8u);
  for (const Instruction* a : exchanges) {
    EXPECT_EQ(a->collectives, 8);
    EXPECT_EQ(a->bytes, std::llround(4 * 4.0 * 8192 * 2048 * 2 / cp * a->range.size()));
    EXPECT_EQ(a->lead_s, 0);
  }
}

// Gradients are reduced over the data- and context-parallel GPUs together; the key/value
// exchanges stay among the C GPUs of a sequence.
TEST(ContextParallel, GradientsReduceOverDataAndContextParallelGpus) {
  const Program p = build_program(gpt(2, proto::Training::RING, {100e9, 1e-6}, 2, 3));
  std::set<size_t> reduce_sizes, exchange_sizes;
  for (int32_t g = 0; g < p.num_groups(); ++g) {
    const auto members = p.members_of_group(g);
    const Op op = p.instructions[members.front()].op;
    (op == Op::kAllreduce ? reduce_sizes : exchange_sizes).insert(members.size());
  }
  EXPECT_EQ(reduce_sizes, std::set<size_t>{6});
  EXPECT_EQ(exchange_sizes, std::set<size_t>{2});
}

TEST(ContextParallel, GpusAreNamedByTheirTensorContextPipelineAndDataRanks) {
  const ResolvedScenario setup = gpt(2, proto::Training::RING, kFree, 2, 2, 2);
  const Program p = build_program(setup);
  const ExecutionTimes times = run_analytic(p, setup.cluster);
  const Timeline timeline = make_timeline(p, setup.cluster, times, memory_curve(p, times), "cp");
  EXPECT_EQ(timeline.devices[0].name, "gpu0 (tp 0, cp 0, pp 0, dp 0)");
  EXPECT_EQ(timeline.devices[3].name, "gpu3 (tp 1, cp 1, pp 0, dp 0)");
  EXPECT_EQ(timeline.devices[4].name, "gpu4 (tp 0, cp 0, pp 1, dp 0)");
  EXPECT_EQ(timeline.devices[15].name, "gpu15 (tp 1, cp 1, pp 1, dp 1)");
}

// A random pipeline whose layers have attention, on C times the devices.
ResolvedScenario random_context_parallel(std::mt19937& rng, proto::ScheduleKind kind) {
  ResolvedScenario setup = testing::random_setup(rng, kind);
  const auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  const int32_t cp = std::uniform_int_distribution<int32_t>(2, 4)(rng);
  setup.training.context_parallel = cp;
  setup.training.context_parallel_algorithm =
      static_cast<Algorithm>(std::uniform_int_distribution<int>(0, 2)(rng));
  for (ModelLayer& layer : setup.model.layers) {
    layer.cp_kv_bytes_per_sample = uniform(1e3, 1e8);
    layer.cp_qkvo_bytes_per_sample = 2 * layer.cp_kv_bytes_per_sample;
    layer.cp_attention_flops_per_sample = uniform(0, 1) * layer.fwd.flops_per_sample;
  }
  const int32_t devices = static_cast<int32_t>(setup.cluster.devices.size()) * cp;
  setup.cluster.gpus_per_node *= cp;
  setup.cluster.devices.clear();
  for (int32_t d = 0; d < devices; ++d) {
    setup.cluster.devices.push_back(
        {d, d / setup.cluster.gpus_per_node, "gpu" + std::to_string(d), 1e14, 1e15});
  }
  return setup;
}

TEST(SimgridExactContextParallel, ReproducesAnalyticTimestampsOnRandomScenarios) {
  std::mt19937 rng(7171);
  for (int trial = 0; trial < testing::random_trials(24); ++trial) {
    const proto::ScheduleKind kinds[] = {proto::GPIPE, proto::ONE_F_ONE_B,
                                         proto::INTERLEAVED_ONE_F_ONE_B, proto::ZB_H1};
    ResolvedScenario setup = random_context_parallel(rng, kinds[trial % 4]);
    setup.simgrid.exact = true;
    setup.training.zero_stage = trial % 4;
    setup.training.grad_bucket_bytes = trial % 2 == 0 ? 0 : 20'000'000;
    const Program program = build_program(setup);
    SCOPED_TRACE(
        "trial " + std::to_string(trial) + ": CP " +
        std::to_string(setup.training.context_parallel) + " " +
        proto::Training::ContextParallelAlgorithm_Name(setup.training.context_parallel_algorithm) +
        ", ZeRO-" + std::to_string(setup.training.zero_stage) + ", " +
        proto::ScheduleKind_Name(setup.schedule.kind));
    testing::expect_same_times(program, run_analytic(program, setup.cluster),
                               run_simgrid(program, setup.cluster, setup.simgrid));
  }
}

}  // namespace
}  // namespace pipetwin
