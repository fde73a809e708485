// Data parallelism: replicas of the pipeline, and the ring all-reduce of each stage's
// gradients, checked against the closed form 2(D-1)/D * bytes/bw + 2(D-1) * latency.
#include <gtest/gtest.h>

#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/link_usage.h"
#include "sim/program/validate_program.h"
#include "sim/simgrid/simgrid_executor.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

ResolvedScenario data_parallel_setup(int stages, int replicas, int64_t parameter_bytes) {
  ResolvedScenario setup = testing::uniform_setup(proto::ONE_F_ONE_B, stages, 4, 0.01, 0.02);
  setup.cluster.devices.clear();
  for (int d = 0; d < stages * replicas; ++d) {
    setup.cluster.devices.push_back({d, 0, "gpu" + std::to_string(d), 1e15, 1e15});
  }
  setup.cluster.gpus_per_node = stages * replicas;
  setup.cluster.intra_node = {50e9, 3e-6};
  for (ModelLayer& layer : setup.model.layers) layer.parameter_bytes = parameter_bytes;
  setup.training.data_parallel = replicas;
  setup.training.global_batch *= replicas;
  return setup;
}

double closed_form(int replicas, double bytes, const LinkSpec& link) {
  return 2.0 * (replicas - 1) / replicas * bytes / link.bandwidth_bytes_per_s +
         2.0 * (replicas - 1) * link.latency_s;
}

TEST(DataParallel, ReplicasRunTheSamePipelineOnTheirOwnDevicesAndSamples) {
  const ResolvedScenario setup = data_parallel_setup(3, 2, 1 << 20);
  const Program p = build_program(setup);
  EXPECT_EQ(p.num_devices, 6);
  int allreduces = 0;
  for (const Instruction& i : p.instructions) {
    if (i.op == Op::kFwd && i.stage == 0) {
      EXPECT_EQ(i.device, i.range.lo < 16 ? 0 : 3) << p.text(&i - p.instructions.data());
    }
    if (i.op == Op::kAllreduce) ++allreduces;
  }
  EXPECT_EQ(allreduces, 3 * 2);  // one per stage and replica
  EXPECT_EQ(p.num_groups(), 3);
}

TEST(DataParallel, AllreduceMatchesTheRingClosedForm) {
  for (int replicas : {2, 3, 4, 8}) {
    const int64_t bytes = int64_t{3} * 5 * 7 * 8 * 1000000;  // divisible by every D here
    const ResolvedScenario setup = data_parallel_setup(1, replicas, bytes);
    const Program p = build_program(setup);
    const double expected = closed_form(replicas, bytes, setup.cluster.intra_node);
    const ExecutionTimes analytic = run_analytic(p, setup.cluster);
    const ExecutionTimes shared = run_simgrid(p, setup.cluster, setup.simgrid);
    ResolvedScenario exact = setup;
    exact.simgrid.exact = true;
    const ExecutionTimes dedicated = run_simgrid(p, exact.cluster, exact.simgrid);
    int checked = 0;
    for (int32_t i = 0; i < p.size(); ++i) {
      if (p.instructions[i].op != Op::kAllreduce) continue;
      ++checked;
      EXPECT_NEAR(analytic.end_s[i] - analytic.start_s[i], expected, 1e-12) << replicas;
      EXPECT_NEAR(dedicated.end_s[i] - dedicated.start_s[i], expected, 1e-9 * expected) << replicas;
      // On NVSwitch ports each ring step uses every port once per direction: no contention.
      EXPECT_NEAR(shared.end_s[i] - shared.start_s[i], expected, 1e-9 * expected) << replicas;
    }
    EXPECT_EQ(checked, replicas);
  }
}

TEST(DataParallel, AllreduceOnASharedPcieSwitchIsSlower) {
  ResolvedScenario setup = data_parallel_setup(1, 4, 400000000);
  setup.cluster.fabric.intra = IntraNodeFabric::kPcieSwitch;
  const Program p = build_program(setup);
  const ExecutionTimes shared = run_simgrid(p, setup.cluster, setup.simgrid);
  const double expected_free = closed_form(4, 4e8, setup.cluster.intra_node);
  // Four flows per step cross the one switch link: each gets a quarter of it.
  const double chunk = 1e8;
  const double expected_shared = 6 * (3e-6 + 4 * chunk / 50e9);
  for (int32_t i = 0; i < p.size(); ++i) {
    if (p.instructions[i].op != Op::kAllreduce) continue;
    EXPECT_GT(shared.end_s[i] - shared.start_s[i], expected_free * 1.5);
    EXPECT_NEAR(shared.end_s[i] - shared.start_s[i], expected_shared, 1e-9 * expected_shared);
  }
}

TEST(DataParallel, LinkUsageAccountsTheRingTraffic) {
  ResolvedScenario setup = data_parallel_setup(1, 4, 400000000);
  setup.cluster.fabric.intra = IntraNodeFabric::kPcieSwitch;
  const Program p = build_program(setup);
  const Topology topology = Topology::shared(setup.cluster);
  const ExecutionTimes t = run_simgrid(p, setup.cluster, setup.simgrid);
  double duration = 0;
  for (int32_t i = 0; i < p.size(); ++i) {
    if (p.instructions[i].op == Op::kAllreduce) duration = t.end_s[i] - t.start_s[i];
  }
  bool found_switch = false;
  for (const LinkUsage& u : link_usage(p, setup.cluster, topology, t)) {
    if (u.name != "pcie_switch0") continue;
    found_switch = true;
    // 4 members x 2(D-1) = 6 steps x a 1e8-byte chunk each, all through the switch.
    EXPECT_DOUBLE_EQ(u.bytes, 4 * 6 * 1e8);
    EXPECT_NEAR(u.busy_s, duration, 1e-12);
    double peak = 0;
    for (const auto& [time, value] : u.utilization) peak = std::max(peak, value);
    // Average rate over the span, latencies included: just under the full link.
    EXPECT_NEAR(peak, 4 * 6e8 / duration / 50e9, 1e-12);
    EXPECT_GT(peak, 0.99);
    EXPECT_LE(peak, 1.0);
    EXPECT_EQ(u.utilization.back().second, 0.0);
  }
  EXPECT_TRUE(found_switch);
}

TEST(DataParallel, OptimWaitsForTheAllreduce) {
  const ResolvedScenario setup = data_parallel_setup(2, 2, 1 << 24);
  const Program p = build_program(setup);
  validate_program(p);
  const ExecutionTimes t = run_analytic(p, setup.cluster);
  for (int32_t i = 0; i < p.size(); ++i) {
    if (p.instructions[i].op != Op::kOptim) continue;
    for (int32_t d : p.deps_of(i)) {
      EXPECT_EQ(p.instructions[d].op, Op::kAllreduce);
      EXPECT_GE(t.start_s[i], t.end_s[d]);
    }
  }
}

}  // namespace
}  // namespace pipetwin
