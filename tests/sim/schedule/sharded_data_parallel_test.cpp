// ZeRO in the Program: stage 1 turns each gradient all-reduce into a reduce-scatter and an
// all-gather over the same group; stage 2 scatters every backward's gradients; stage 3
// gathers every layer before each pass that needs its weights. Closed forms on one stage
// give the iteration both when compute hides the gathers and when the gathers dominate.
#include "sim/schedule/sharded_data_parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "random_setup.h"
#include "random_trials.h"
#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/model/training_memory.h"
#include "sim/simgrid/simgrid_executor.h"

namespace pipetwin {
namespace {

struct Replicated {
  proto::ScheduleKind kind = proto::ONE_F_ONE_B;
  int stages = 2;
  int microbatches = 4;
  int replicas = 4;
  int layers_per_stage = 2;
  double fwd_s = 1e-3;  // per layer and microbatch
  double bwd_s = 2e-3;
  int64_t parameter_bytes = 4'000'000;  // per layer, fp32: as many weight and gradient bytes
  LinkSpec link{100e9, 0.0};
};

// `replicas` copies of a pipeline of identical layers on one node of identical links.
ResolvedScenario replicated(const Replicated& r, int32_t zero_stage) {
  ResolvedScenario setup;
  setup.name = "replicated";
  const int devices = r.stages * r.replicas;
  for (int d = 0; d < devices; ++d) {
    setup.cluster.devices.push_back({d, 0, "gpu" + std::to_string(d), 1e15, 1e15});
  }
  setup.cluster.gpus_per_node = devices;
  setup.cluster.intra_node = r.link;
  const int layers = r.stages * r.layers_per_stage;
  for (int l = 0; l < layers; ++l) {
    ModelLayer layer;
    layer.name = "l";
    layer.name += std::to_string(l);
    layer.fwd.seconds_per_sample = r.fwd_s;
    layer.bwd.seconds_per_sample = r.bwd_s;
    layer.parameter_bytes = r.parameter_bytes;
    if (l + 1 < layers) layer.consumers = {l + 1};
    setup.model.layers.push_back(layer);
  }
  setup.training = {r.microbatches * r.replicas, r.microbatches, 1, proto::SGD, r.replicas};
  setup.training.zero_stage = zero_stage;
  setup.schedule.kind = r.kind;
  setup.schedule.stages = r.stages;
  return setup;
}

using CollectiveKey = std::tuple<int32_t, int32_t, int64_t, std::vector<int32_t>>;

// Each collective of `op`: its stage, iteration, bytes and devices.
std::multiset<CollectiveKey> collectives(const Program& p, Op op) {
  std::multiset<CollectiveKey> keys;
  for (int32_t g = 0; g < p.num_groups(); ++g) {
    const auto members = p.members_of_group(g);
    const Instruction& first = p.instructions[members.front()];
    if (first.op != op) continue;
    std::vector<int32_t> devices;
    for (int32_t m : members) devices.push_back(p.instructions[m].device);
    std::sort(devices.begin(), devices.end());
    keys.insert({first.stage, first.iteration, first.bytes, devices});
  }
  return keys;
}

double iteration_s(const Program& p, const ClusterSpec& cluster) {
  const ExecutionTimes times = run_analytic(p, cluster);
  return *std::max_element(times.end_s.begin(), times.end_s.end());
}

TEST(ShardedDataParallel, StageOneScattersAndGathersWhereAllReducesWere) {
  std::mt19937 rng(31);
  for (proto::ScheduleKind kind : {proto::GPIPE, proto::ONE_F_ONE_B, proto::INTERLEAVED_ONE_F_ONE_B,
                                   proto::ZB_H1, proto::ZB_V}) {
    for (int trial = 0; trial < testing::random_trials(8); ++trial) {
      ResolvedScenario setup = testing::random_setup(rng, kind);
      const Program whole = build_program(setup);
      setup.training.zero_stage = 1;
      const Program sharded = build_program(setup);
      const auto reduced = collectives(whole, Op::kAllreduce);
      EXPECT_EQ(collectives(sharded, Op::kAllreduce).size(), 0u);
      EXPECT_EQ(collectives(sharded, Op::kReduceScatter), reduced);
      EXPECT_EQ(collectives(sharded, Op::kAllGather), reduced);
    }
  }
}

// A ring reduce-scatter and a ring all-gather take a ring all-reduce's time on identical
// links, so with no optimizer time stage 1's iteration is stage 0's.
TEST(ShardedDataParallel, StageOneTakesTheAllReducesTimeOnIdenticalLinks) {
  Replicated r;
  r.link = {50e9, 3e-6};
  const ResolvedScenario whole = replicated(r, 0);
  const ResolvedScenario sharded = replicated(r, 1);
  EXPECT_NEAR(iteration_s(build_program(sharded), sharded.cluster),
              iteration_s(build_program(whole), whole.cluster), 1e-12);
}

// Each replica updates 1/N of the parameters.
TEST(ShardedDataParallel, TheUpdateTakesOneShareOfTheOptimizerTime) {
  Replicated r;
  for (int32_t zero_stage : {0, 1, 2, 3}) {
    ResolvedScenario setup = replicated(r, zero_stage);
    for (ModelLayer& layer : setup.model.layers) layer.optim_seconds = 8e-3;
    const Program p = build_program(setup);
    for (const Instruction& ins : p.instructions) {
      if (ins.op != Op::kOptim) continue;
      EXPECT_DOUBLE_EQ(ins.compute_s, zero_stage == 0 ? 16e-3 : 16e-3 / r.replicas);
    }
  }
}

// Stage 2: every backward's gradients are scattered as it ends; the update waits for the
// last; the updated weights are gathered once.
TEST(ShardedDataParallel, StageTwoScattersEveryBackward) {
  Replicated r;
  const Program p = build_program(replicated(r, 2));
  for (int32_t d = 0; d < p.num_devices; ++d) {
    std::vector<int32_t> scatters, gathers;
    int32_t optim = -1;
    for (int32_t i = 0; i < p.size(); ++i) {
      const Instruction& ins = p.instructions[i];
      if (ins.device != d) continue;
      if (ins.op == Op::kReduceScatter) {
        scatters.push_back(i);
        ASSERT_EQ(p.deps_of(i).size(), 1u);
        EXPECT_EQ(p.instructions[p.deps_of(i)[0]].op, Op::kBwd);
        EXPECT_EQ(p.instructions[p.deps_of(i)[0]].microbatch, ins.microbatch);
      }
      if (ins.op == Op::kAllGather) gathers.push_back(i);
      if (ins.op == Op::kOptim) optim = i;
    }
    ASSERT_EQ(static_cast<int>(scatters.size()), r.microbatches);
    const auto optim_deps = p.deps_of(optim);
    EXPECT_NE(std::find(optim_deps.begin(), optim_deps.end(), scatters.back()), optim_deps.end());
    ASSERT_EQ(gathers.size(), 1u);
    EXPECT_EQ(p.deps_of(gathers[0])[0], optim);
  }
}

// Stage 3: each pass that needs the weights (FWD, BWD, BWD_INPUT; not BWD_WEIGHT) waits for
// an ALL_GATHER of its first layer, followed by one of its other layers; together one
// collective per layer and the stage's weight bytes. No gather follows the update.
TEST(ShardedDataParallel, StageThreeGathersEveryLayerBeforeEachPass) {
  for (proto::ScheduleKind kind : {proto::ONE_F_ONE_B, proto::ZB_H1}) {
    Replicated r;
    r.kind = kind;
    r.layers_per_stage = 3;
    const Program p = build_program(replicated(r, 3));
    std::map<int32_t, int32_t> layers_gathered;  // device -> all-gathers, counted per layer
    std::map<int32_t, int32_t> passes;           // device -> passes that need weights
    for (int32_t i = 0; i < p.size(); ++i) {
      const Instruction& ins = p.instructions[i];
      if (ins.op == Op::kAllGather) {
        layers_gathered[ins.device] += ins.collectives;
        for (int32_t d : p.deps_of(i)) EXPECT_NE(p.instructions[d].op, Op::kOptim);
      }
      if (!is_pass(ins.op)) continue;
      // Its own first gather: one collective (the rest of a pass, which later passes wait
      // for too, holds layers - 1 = 2).
      int64_t first_layer = 0;
      for (int32_t d : p.deps_of(i)) {
        const Instruction& dep = p.instructions[d];
        if (dep.op == Op::kAllGather && dep.collectives == 1) first_layer += dep.bytes;
      }
      if (ins.op == Op::kBwdWeight) {
        EXPECT_EQ(first_layer, 0) << p.describe(i);
        continue;
      }
      passes[ins.device] += 1;
      EXPECT_EQ(first_layer, r.parameter_bytes) << p.describe(i);
    }
    for (int32_t d = 0; d < p.num_devices; ++d) {
      EXPECT_EQ(passes[d], 2 * r.microbatches) << d;
      EXPECT_EQ(layers_gathered[d], 2 * r.microbatches * r.layers_per_stage) << d;
    }
  }
}

// One stage of 4 layers, one microbatch, two replicas on a link of bandwidth B and no latency:
// a layer's gather takes g = w / 2B and the gradients' scatter 4g. When a layer computes
// longer than g, only the first layer's gather of each pass shows:
//   T = g + 4f + g + 4b + 4g.
// When gathers dominate (g = 5 ms, f = 1 ms, b = 2 ms) the lane of gathers paces the passes:
// F's layers arrive at 4g, B's first at 5g, the rest at 8g, and the scatter ends at 12g.
TEST(ShardedDataParallel, StageThreeClosedForms) {
  Replicated r;
  r.stages = 1;
  r.microbatches = 1;
  r.replicas = 2;
  r.layers_per_stage = 4;
  r.kind = proto::GPIPE;
  const double g = static_cast<double>(r.parameter_bytes) / (2 * r.link.bandwidth_bytes_per_s);
  {
    r.fwd_s = 3 * g;
    r.bwd_s = 2 * g;
    const ResolvedScenario setup = replicated(r, 3);
    EXPECT_NEAR(iteration_s(build_program(setup), setup.cluster),
                g + 4 * r.fwd_s + g + 4 * r.bwd_s + 4 * g, 1e-12);
  }
  {
    r.link.bandwidth_bytes_per_s = static_cast<double>(r.parameter_bytes) / (2 * 5e-3);  // g = 5 ms
    r.fwd_s = 1e-3;
    r.bwd_s = 2e-3;
    const ResolvedScenario setup = replicated(r, 3);
    EXPECT_NEAR(iteration_s(build_program(setup), setup.cluster), 12 * 5e-3, 1e-12);
  }
}

}  // namespace
}  // namespace pipetwin

namespace pipetwin {
namespace {

// The FSDP variants: how long gathered weights stay whole (training.fsdp_reshard) and hybrid
// sharding (training.fsdp_shard_size).
ResolvedScenario fsdp(const Replicated& r, proto::Training::FsdpReshard reshard,
                      int32_t shard_size = 0, int32_t zero_stage = 3) {
  ResolvedScenario setup = replicated(r, zero_stage);
  setup.training.fsdp_reshard = reshard;
  setup.training.fsdp_shard_size = shard_size;
  return setup;
}

// Per device, the passes that wait for a gather of their first layer (a gather of one layer).
std::map<int32_t, std::vector<Op>> gathering_passes(const Program& p) {
  std::map<int32_t, std::vector<Op>> passes;
  for (int32_t i = 0; i < p.size(); ++i) {
    if (!is_pass(p.instructions[i].op)) continue;
    for (int32_t d : p.deps_of(i)) {
      const Instruction& dep = p.instructions[d];
      if (dep.op == Op::kAllGather && dep.collectives == 1) {
        passes[p.instructions[i].device].push_back(p.instructions[i].op);
      }
    }
  }
  return passes;
}

// reshard_after_forward False: no backward gathers; under GPipe only the first forward does
// (the forwards follow each other), under 1F1B's last stage every forward (a backward
// resharded the weights before it).
TEST(ShardedDataParallel, WeightsKeptUntilTheBackwardAreGatheredByForwardsOnly) {
  Replicated r;
  r.layers_per_stage = 3;
  for (proto::ScheduleKind kind : {proto::GPIPE, proto::ONE_F_ONE_B}) {
    r.kind = kind;
    const Program p = build_program(fsdp(r, proto::Training::AFTER_BACKWARD));
    const auto passes = gathering_passes(p);
    for (int32_t d = 0; d < p.num_devices; ++d) {
      const std::vector<Op>& gathered = passes.at(d);
      for (Op op : gathered) EXPECT_EQ(op, Op::kFwd) << d;
      const bool last_stage = d % r.stages == r.stages - 1;
      const size_t expected =
          kind == proto::GPIPE ? 1 : (last_stage ? r.microbatches : gathered.size());
      EXPECT_EQ(gathered.size(), expected) << d;
      if (kind == proto::ONE_F_ONE_B && !last_stage) {
        // Stage 0 runs 1 forward of warm-up: F F B F B F B B, gathering at F0, F2, F3.
        EXPECT_EQ(gathered.size(), static_cast<size_t>(r.microbatches - 1)) << d;
      }
    }
  }
}

// As torch.distributed.pipelining runs FSDP2: one gather per stage per iteration (its first
// pass), one reduce-scatter after its last backward, no gather after the update.
TEST(ShardedDataParallel, WeightsKeptForTheStepAreGatheredAndScatteredOnce) {
  Replicated r;
  r.layers_per_stage = 3;
  const Program p = build_program(fsdp(r, proto::Training::AFTER_STEP));
  const auto passes = gathering_passes(p);
  std::map<int32_t, int32_t> scatters;
  for (int32_t i = 0; i < p.size(); ++i) {
    const Instruction& ins = p.instructions[i];
    if (ins.op == Op::kReduceScatter) scatters[ins.device] += 1;
    if (ins.op != Op::kAllGather) continue;
    for (int32_t d : p.deps_of(i)) EXPECT_NE(p.instructions[d].op, Op::kOptim);
  }
  for (int32_t d = 0; d < p.num_devices; ++d) {
    EXPECT_EQ(passes.at(d).size(), 1u) << d;
    EXPECT_EQ(passes.at(d).front(), Op::kFwd) << d;
    EXPECT_EQ(scatters[d], 1) << d;
  }
}

// With free links every variant's step is compute alone: 2 stages of 1F1B, 4 microbatches.
TEST(ShardedDataParallel, FreeLinksMakeEveryFsdpVariantComputeAlone) {
  Replicated r;
  r.link = {1e30, 0.0};
  const ResolvedScenario plain = replicated(r, 0);
  const double compute = iteration_s(build_program(plain), plain.cluster);
  for (auto reshard : {proto::Training::AFTER_EACH_PASS, proto::Training::AFTER_BACKWARD,
                       proto::Training::AFTER_STEP}) {
    for (int32_t shard : {0, 2}) {
      const ResolvedScenario setup = fsdp(r, reshard, shard);
      EXPECT_NEAR(iteration_s(build_program(setup), setup.cluster), compute, 1e-9)
          << proto::Training::FsdpReshard_Name(reshard) << " shard " << shard;
    }
  }
}

// Hybrid sharding over 4 replicas in shard groups of 2: each reduce-scatter and all-gather
// among a shard group (replicas 0-1, 2-3), each scatter followed by an all-reduce of its half
// among the replicas with the same place (0 and 2, 1 and 3); each replica keeps half of the
// optimizer state where full sharding keeps a quarter.
TEST(ShardedDataParallel, HybridShardingShardsWithinGroupsAndReducesAcross) {
  Replicated r;
  r.stages = 1;
  for (int32_t stage : {1, 2, 3}) {
    const ResolvedScenario setup = fsdp(r, proto::Training::AFTER_EACH_PASS, 2, stage);
    const Program p = build_program(setup);
    int scatters = 0, across = 0;
    for (int32_t g = 0; g < p.num_groups(); ++g) {
      const auto members = p.members_of_group(g);
      const Instruction& first = p.instructions[members.front()];
      if (!first.data_parallel) continue;
      std::set<int32_t> devices;
      for (int32_t m : members) devices.insert(p.instructions[m].device);
      ASSERT_EQ(devices.size(), 2u) << p.describe(members.front());
      if (first.op == Op::kAllreduce) {
        EXPECT_EQ(*devices.rbegin() - *devices.begin(), 2) << "across the shard groups";
        EXPECT_EQ(first.bytes, 2 * r.parameter_bytes / 2) << "half of a stage's 2 layers";
        across += 1;
      } else {
        EXPECT_EQ(*devices.begin() % 2, 0) << "within a shard group";
        EXPECT_EQ(*devices.rbegin() - *devices.begin(), 1);
        scatters += first.op == Op::kReduceScatter;
      }
    }
    EXPECT_EQ(across, scatters) << "stage " << stage;
    EXPECT_GT(scatters, 0);
    // Resident state: the sharded kinds of bytes at 1/2 instead of 1/4, for the stage's 2
    // layers of parameter_bytes / 4 parameters each.
    const PipelineLayout hybrid = make_layout(setup, place_layers(setup));
    const ResolvedScenario full_setup = fsdp(r, proto::Training::AFTER_EACH_PASS, 0, stage);
    const PipelineLayout full = make_layout(full_setup, place_layers(full_setup));
    const BytesPerParameter b = bytes_per_parameter(setup.training);
    const double per_parameter =
        b.optimizer + (stage >= 2 ? b.gradients : 0) + (stage >= 3 ? b.weights : 0);
    const double parameters = 2.0 * static_cast<double>(r.parameter_bytes) / 4;
    EXPECT_NEAR(static_cast<double>(hybrid.static_bytes[0] - full.static_bytes[0]),
                parameters * per_parameter * (1.0 / 2 - 1.0 / 4), 2)
        << "stage " << stage;
  }
}

// Exact SimGrid gives the analytic engine's times on every FSDP variant, under 1F1B with two
// stages and ZB-H1.
TEST(ShardedDataParallel, SimgridReproducesAnalyticTimesOnFsdpVariants) {
  for (proto::ScheduleKind kind : {proto::ONE_F_ONE_B, proto::ZB_H1}) {
    for (auto reshard : {proto::Training::AFTER_EACH_PASS, proto::Training::AFTER_BACKWARD,
                         proto::Training::AFTER_STEP}) {
      for (int32_t shard : {0, 2}) {
        SCOPED_TRACE(proto::Training::FsdpReshard_Name(reshard) + " shard " +
                     std::to_string(shard) + " " + proto::ScheduleKind_Name(kind));
        Replicated r;
        r.kind = kind;
        r.link = {20e9, 2e-6};
        ResolvedScenario setup = fsdp(r, reshard, shard);
        testing::expect_exact_simgrid_equals_analytic(setup);
      }
    }
  }
}

}  // namespace
}  // namespace pipetwin
