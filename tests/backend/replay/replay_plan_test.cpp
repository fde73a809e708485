// The CUDA replay's logic, tested without a GPU: which device operation each instruction
// becomes, how compute is sized, which events order the lanes, the host's enqueue order,
// and how measured ends become the Program's times. backend/cuda only carries this out.
#include "backend/replay/replay_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "backend/common/measured_times.h"
#include "cli_runner.h"
#include "random_setup.h"
#include "sim/driver/build_program.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

ReplayKind expected_kind(Op op, bool flop_counted) {
  switch (lane_of(op)) {
    case Lane::kCompute:
      return flop_counted ? ReplayKind::kGemm : ReplayKind::kSpin;
    case Lane::kCopy:
      return op == Op::kOffload ? ReplayKind::kToHost : ReplayKind::kToDevice;
    case Lane::kCollective:
      return op == Op::kAllToAll ? ReplayKind::kAllToAll : ReplayKind::kAllReduce;
    default:
      return is_send(op) ? ReplayKind::kSend : ReplayKind::kRecv;
  }
}

// Every instruction of every rank appears once, on its own lane, as the operation its op
// names, with its name, bytes, peer, stash allocation and the events of its cross-lane
// deps; the rank's resident bytes come with the plan.
TEST(ReplayPlan, EveryInstructionBecomesItsDeviceOperation) {
  std::mt19937 rng(3);
  for (auto kind :
       {proto::GPIPE, proto::ONE_F_ONE_B, proto::INTERLEAVED_ONE_F_ONE_B, proto::UMPIPE}) {
    const ResolvedScenario setup = testing::random_setup(rng, kind);
    const Program p = build_program(setup);
    std::set<int32_t> seen;
    for (int32_t rank = 0; rank < p.num_devices; ++rank) {
      for (const bool flops : {false, true}) {
        const ReplayPlan plan = make_replay_plan(p, rank, {1e15, flops});
        // The weights and optimizer state the Program accounts, allocated before the run.
        EXPECT_EQ(plan.resident_bytes, p.static_bytes.at(rank));
        EXPECT_EQ(plan.program_size, p.size());
        for (const ReplayOp& op : plan.ops) {
          const Instruction& ins = p.instructions[op.instruction];
          EXPECT_EQ(ins.device, rank);
          EXPECT_EQ(op.text, p.text(op.instruction));
          EXPECT_EQ(op.lane, static_cast<int>(ins.lane()));
          EXPECT_EQ(op.kind, expected_kind(ins.op, flops)) << p.describe(op.instruction);
          EXPECT_EQ(op.bytes, ins.bytes);
          if (is_transfer(ins.op)) {
            EXPECT_EQ(op.peer, ins.peer_device);
          }
          EXPECT_EQ(op.allocate_bytes, ins.op == Op::kFwd ? ins.stash_bytes : 0);
          EXPECT_EQ(op.free_bytes, ins.op == Op::kBwd ? ins.stash_bytes : 0);
          std::set<int32_t> cross_lane;
          for (int32_t d : p.deps_of(op.instruction)) {
            if (p.instructions[d].lane() != ins.lane()) cross_lane.insert(d);
          }
          EXPECT_EQ(std::set<int32_t>(op.wait_for.begin(), op.wait_for.end()), cross_lane);
          if (flops) seen.insert(op.instruction);
        }
      }
    }
    EXPECT_EQ(seen.size(), static_cast<size_t>(p.size()));
  }
}

// Expert parallelism: each ALL_TO_ALL becomes an NCCL all-to-all among its group's ranks,
// whose communicator the plan lists.
TEST(ReplayPlan, AllToAllsRunAmongTheirExpertGroup) {
  const ResolvedScenario setup = resolve_scenario(load_scenario(
      "builtin:mixtral-8x7b-64gpu",
      {"cluster.nodes=1", "model.zoo.layers=2", "schedule.stages=2", "training.data_parallel=4",
       "training.expert_parallel=2", "training.global_batch=8", "training.microbatches=2"}));
  const Program p = build_program(setup);
  int exchanges = 0;
  for (int32_t rank = 0; rank < p.num_devices; ++rank) {
    const ReplayPlan plan = make_replay_plan(p, rank, {1e15, true});
    for (const ReplayOp& op : plan.ops) {
      if (p.instructions[op.instruction].op != Op::kAllToAll) continue;
      ++exchanges;
      EXPECT_EQ(op.kind, ReplayKind::kAllToAll);
      // Rank r's group: the same stage on the replica next to it (replicas 0-1 or 2-3).
      const int32_t replica = rank / 2;
      const int32_t first = (replica / 2) * 2 * 2 + rank % 2;
      EXPECT_EQ(op.group, std::vector<int32_t>({first, first + 2}));
      EXPECT_NE(std::find(plan.groups.begin(), plan.groups.end(), std::pair{op.lane, op.group}),
                plan.groups.end());
    }
  }
  EXPECT_EQ(exchanges, 8 * 2 * 2);  // ranks x microbatches x passes
}

// GEMMs of repeats x 2 m n k FLOPs within four steps of k per repeat of what the op costs
// at the device's rate, none deeper than it is wide (k <= the side), every dimension a
// multiple of 8 (16-byte BF16 rows, which fast tensor-core kernels need).
TEST(ReplayPlan, GemmsCarryTheOpsFlops) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 1000; ++trial) {
    const double flops = std::pow(10.0, std::uniform_real_distribution<double>(3, 15)(rng));
    const GemmShape g = gemm_for_flops(flops, 8192);
    EXPECT_EQ(g.m, g.n);
    EXPECT_LE(g.m, 8192);
    EXPECT_EQ(g.m % 8, 0);
    EXPECT_EQ(g.k % 8, 0);
    EXPECT_GE(g.k, 8);
    EXPECT_LE(g.k, 8192) << flops;
    EXPECT_GE(g.repeats, 1);
    EXPECT_LE(std::abs(2.0 * g.m * g.n * g.k * g.repeats - flops), 8.0 * g.m * g.n * g.repeats)
        << flops;
    // Above some 20 microseconds' work, within 1%.
    if (flops > 1e10) {
      EXPECT_NEAR(2.0 * g.m * g.n * g.k * g.repeats / flops, 1.0, 0.01) << flops;
    }
  }
  // 1.2e13 FLOPs (a GPT stage's forward): 11 GEMMs of 8192 x 8192 x ~8k, not one k of 89k.
  const GemmShape big = gemm_for_flops(1.2e13, 8192);
  EXPECT_EQ(big.repeats, 11);
  EXPECT_NEAR(big.k, 1.2e13 / (2.0 * 8192 * 8192 * 11), 4);
  const ResolvedScenario setup = testing::uniform_setup(proto::ONE_F_ONE_B, 2, 4, 2e-3, 4e-3);
  const Program p = build_program(setup);
  const double rate = 400e12;
  for (const ReplayOp& op : make_replay_plan(p, 0, {rate, true}).ops) {
    if (op.kind != ReplayKind::kGemm) continue;
    const double flops = p.instructions[op.instruction].compute_s * rate;
    EXPECT_NEAR(2.0 * op.m * op.n * op.k * op.repeats, flops, 8.0 * op.m * op.n * op.repeats);
  }
}

// The host enqueues each lane in order and an op only after what it waits for, so that
// every cudaStreamWaitEvent finds its event recorded.
TEST(ReplayPlan, EnqueueOrderRecordsEveryEventBeforeItIsAwaited) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 30; ++trial) {
    ResolvedScenario setup = testing::random_setup(rng, proto::ONE_F_ONE_B);
    if (trial % 2) {  // the copy lane too
      setup.cluster.has_host_link = true;
      setup.cluster.host_link = {16e9, 1e-6};
      setup.cluster.host_memory_bytes = 1e18;
      setup.schedule.offload.enabled = true;
      for (int s = 0; s < setup.schedule.stages; ++s) setup.schedule.offload.stages.push_back(s);
    }
    const Program p = build_program(setup);
    for (int32_t rank = 0; rank < p.num_devices; ++rank) {
      const ReplayPlan plan = make_replay_plan(p, rank, {1e15, false});
      const std::vector<size_t> order = host_enqueue_order(plan);
      ASSERT_EQ(order.size(), plan.ops.size());
      std::set<int32_t> done;
      std::map<int, size_t> last_in_lane;
      for (size_t k : order) {
        const ReplayOp& op = plan.ops[k];
        for (int32_t d : op.wait_for) EXPECT_TRUE(done.count(d)) << p.describe(op.instruction);
        if (last_in_lane.count(op.lane)) {
          EXPECT_GT(k, last_in_lane[op.lane]);
        }
        last_in_lane[op.lane] = k;
        done.insert(op.instruction);
      }
    }
  }
}

// Each end of a transfer saw only itself: both get the later post as start and the
// receive's end as end, as the simulators record a rendezvous.
TEST(MeasuredTimes, TransfersGetTheRendezvousOfTheirTwoEnds) {
  const ResolvedScenario setup = testing::uniform_setup(proto::GPIPE, 2, 1, 1, 2);
  ResolvedScenario with_bytes = setup;
  with_bytes.model.layers[0].activation_bytes_per_sample = 1000;
  const Program p = build_program(with_bytes);
  ExecutionTimes t;
  t.start_s.assign(p.size(), 0);
  t.end_s.assign(p.size(), 0);
  int32_t send = -1;
  for (int32_t i = 0; i < p.size(); ++i) {
    if (is_send(p.instructions[i].op)) send = i;
  }
  ASSERT_GE(send, 0);
  const int32_t recv = p.partner[send];
  t.start_s[send] = 1.0, t.end_s[send] = 3.0;  // the sender returned late
  t.start_s[recv] = 0.5, t.end_s[recv] = 2.0;  // posted early, data in at 2
  pair_transfer_times(p, t);
  EXPECT_EQ(t.start_s[send], 1.0);
  EXPECT_EQ(t.start_s[recv], 1.0);
  EXPECT_EQ(t.end_s[send], 2.0);
  EXPECT_EQ(t.end_s[recv], 2.0);
}

// Without a GPU, one line that says so and points at the CPU backend; exit 1. A
// FreezePipe scenario gets as far (its phases are replayed where there is a GPU).
TEST(ReplayCli, WithoutAGpuSaysSoAndSuggestsTheTorchBackend) {
#if !defined(PIPETWIN_HAS_TORCH) && !defined(PIPETWIN_HAS_CUDA)
  GTEST_SKIP() << "run is built with LibTorch or CUDA";
#endif
  for (const char* scenario : {"builtin:quickstart", "builtin:freezepipe-gpt-8gpu"}) {
    const testing::CliResult r =
        testing::run_pipetwin(std::string("run ") + scenario + " --backend cuda");
    if (r.exit_code == 0) GTEST_SKIP() << "a GPU is visible: the replay ran";
    EXPECT_EQ(r.exit_code, 1) << scenario << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("--backend torch"));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// Freezing on measured gradients needs a model: the replay names the freeze block (a build
// without the CUDA backend says so first).
TEST(ReplayCli, FreezingWithoutASourceNamesTheFreezeBlock) {
#if !defined(PIPETWIN_HAS_CUDA)
  GTEST_SKIP() << "the replay is built with CUDA";
#endif
  const testing::TempDir dir;
  const std::string path =
      dir.write("rule.textproto",
                "name: \"rule\"\n"
                "cluster { preset: \"dgx-h100\" gpus_per_node: 2 }\n"
                "model { zoo { name: \"gpt\" layers: 8 hidden: 1024 "
                "seq_len: 512 heads: 16 vocab: 50257 } }\n"
                "training { global_batch: 16 microbatches: 4 iterations: 20 }\n"
                "schedule { kind: ONE_F_ONE_B stages: 2 }\n"
                "freeze { interval_iterations: 5 }\n")
          .string();
  const testing::CliResult r = testing::run_pipetwin("run " + path + " --backend cuda");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(path + ":6"));
  EXPECT_THAT(r.err, HasSubstr("no model whose gradients"));
}

}  // namespace
}  // namespace pipetwin
