// Asynchronous pipelines (PipeDream, PipeDream-2BW, APapo): closed forms on uniform
// stages, the weight versions each keeps, micro-batch control down to the synchronous
// limit, exact-mode agreement of the two simulators, and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "cli_runner.h"
#include "random_setup.h"
#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/model/training_memory.h"
#include "sim/schedule/weight_versions.h"
#include "sim/simgrid/simgrid_executor.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

double makespan(const ResolvedScenario& setup) {
  const ExecutionTimes t = run_analytic(build_program(setup), setup.cluster);
  return *std::max_element(t.end_s.begin(), t.end_s.end());
}

ResolvedScenario uniform(proto::ScheduleKind kind, int K, int M, int T, double f, double b) {
  ResolvedScenario setup = testing::uniform_setup(kind, K, M, f, b);
  setup.training.iterations = T;
  return setup;
}

// Without a flush, T iterations of M microbatches are one 1F1B stream of T M
// microbatches: (T M + K - 1)(t_f + t_b). Synchronous 1F1B pays the fill and drain every
// iteration: T (M + K - 1)(t_f + t_b).
TEST(AsyncPipeline, NoFlushIsOneLongStream) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 6)(rng);
    const int M = std::uniform_int_distribution<int>(K, 12)(rng);
    const int T = std::uniform_int_distribution<int>(1, 4)(rng);
    const double f = 1e-3, b = 2e-3;
    for (auto kind : {proto::PIPEDREAM_ASYNC, proto::PIPEDREAM_2BW}) {
      EXPECT_NEAR(makespan(uniform(kind, K, M, T, f, b)), (T * M + K - 1) * (f + b), 1e-12)
          << "K=" << K << " M=" << M << " T=" << T << " kind " << kind;
    }
    EXPECT_NEAR(makespan(uniform(proto::ONE_F_ONE_B, K, M, T, f, b)), T * (M + K - 1) * (f + b),
                1e-12);
  }
}

// APapo's micro-batch control: no microbatch of iteration t + 1 before t's update is the
// synchronous pipeline; unbounded it is the asynchronous stream; in between, in between.
TEST(AsyncPipeline, MicrobatchControlSpansSynchronousToAsynchronous) {
  const int K = 4, M = 8, T = 3;
  const double f = 1e-3, b = 2e-3;
  ResolvedScenario apapo = uniform(proto::APAPO, K, M, T, f, b);
  apapo.schedule.max_staleness = 0;
  EXPECT_NEAR(makespan(apapo), T * (M + K - 1) * (f + b), 1e-12);
  apapo.schedule.max_staleness = M;
  apapo.schedule.max_in_flight_iterations = T;
  EXPECT_NEAR(makespan(apapo), (T * M + K - 1) * (f + b), 1e-12);
  double previous = T * (M + K - 1) * (f + b);
  for (int x = 1; x < K; ++x) {
    apapo.schedule.max_staleness = x;
    const double time = makespan(apapo);
    EXPECT_LT(time, previous + 1e-12) << "max_staleness " << x;
    previous = time;
  }
}

// PipeDream updates after every microbatch: stage s runs K - s - 1 microbatches ahead,
// so it stashes K - s versions and its gradients are K - s - 1 versions stale. 2BW
// accumulates over M >= K microbatches: two versions, one behind. Synchronous: one, none.
TEST(AsyncPipeline, WeightVersionsAsPipeDreamCountsThem) {
  const int K = 4, M = 8, T = 3;
  const WeightVersions pipedream =
      weight_versions(build_program(uniform(proto::PIPEDREAM_ASYNC, K, M, T, 1e-3, 2e-3)));
  for (int s = 0; s < K; ++s) EXPECT_EQ(pipedream.alive[s], K - s) << "stage " << s;
  EXPECT_EQ(pipedream.max_staleness, K - 1);

  const WeightVersions two_bw =
      weight_versions(build_program(uniform(proto::PIPEDREAM_2BW, K, M, T, 1e-3, 2e-3)));
  EXPECT_EQ(two_bw.max_staleness, 1);
  EXPECT_EQ(two_bw.alive[0], 2);
  EXPECT_EQ(two_bw.alive[K - 1], 1);  // the last stage runs nothing ahead
  EXPECT_GT(two_bw.mean_staleness, 0);
  EXPECT_LT(two_bw.mean_staleness, 1);

  for (auto kind : {proto::GPIPE, proto::ONE_F_ONE_B}) {
    const WeightVersions sync = weight_versions(build_program(uniform(kind, K, M, T, 1e-3, 2e-3)));
    EXPECT_EQ(sync.max_staleness, 0);
    EXPECT_THAT(sync.alive, ::testing::Each(1));
  }
}

// Each stashed version costs the stage's weights once more.
TEST(AsyncPipeline, StashedVersionsAreResidentMemory) {
  const int K = 3, M = 6;
  ResolvedScenario sync = uniform(proto::ONE_F_ONE_B, K, M, 2, 1e-3, 2e-3);
  for (ModelLayer& layer : sync.model.layers) layer.parameter_bytes = 4000;
  ResolvedScenario async = sync;
  async.schedule.kind = proto::PIPEDREAM_ASYNC;
  const Program a = build_program(async), s = build_program(sync);
  const BytesPerParameter per = bytes_per_parameter(sync.training);
  for (int d = 0; d < K; ++d) {
    EXPECT_EQ(a.static_bytes[d] - s.static_bytes[d], std::llround((K - d - 1) * 1000 * per.weights))
        << "device " << d;
  }
}

// Exact mode reproduces the analytic timestamps on asynchronous Programs too, with
// data-parallel replicas and their all-reduces, and with blocking point-to-point.
TEST(AsyncPipeline, SimgridExactEqualsAnalytic) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 20; ++trial) {
    ResolvedScenario setup = testing::random_setup(rng, proto::ONE_F_ONE_B);
    const int replicas = setup.training.data_parallel;
    setup.training.iterations = 3;
    setup.training.microbatches = std::max(setup.training.microbatches, setup.schedule.stages);
    setup.training.global_batch = replicas * setup.training.microbatches * 4;
    const proto::ScheduleKind kinds[] = {proto::PIPEDREAM_ASYNC, proto::PIPEDREAM_2BW,
                                         proto::APAPO};
    setup.schedule.kind = kinds[trial % 3];
    setup.schedule.max_staleness = trial % 4;
    setup.schedule.comm_overlap = trial % 2 == 0;  // else blocking point-to-point
    SCOPED_TRACE("trial " + std::to_string(trial) + ", " + std::to_string(replicas) +
                 " replicas, overlap " + std::to_string(setup.schedule.comm_overlap));
    testing::expect_exact_simgrid_equals_analytic(setup);
  }
}

// `one` as D data-parallel replicas on D times its devices, each with its slice of a D
// times larger batch.
ResolvedScenario replicated_setup(const ResolvedScenario& one, int D) {
  ResolvedScenario many = one;
  const int devices = static_cast<int>(one.cluster.devices.size()) * D;
  many.training.data_parallel = D;
  many.training.global_batch *= D;
  many.cluster.devices.clear();
  for (int d = 0; d < devices; ++d) {
    many.cluster.devices.push_back({d, 0, "gpu" + std::to_string(d), 1e15, 1e15});
  }
  many.cluster.gpus_per_node = devices;
  return many;
}

// Data parallelism: every replica runs the same asynchronous order on its slice of the
// batch, and each update waits for an all-reduce of its stage's gradients across the
// replicas. With all-reduces of a few bytes over fast links, the run is the single
// pipeline's closed form; each update's all-reduce groups one member per replica.
TEST(AsyncPipeline, ReplicasRunTheOrderOnTheirSliceAndReduceBeforeEachUpdate) {
  const int K = 3, M = 6, T = 2, D = 3;
  const double f = 1e-3, b = 2e-3;
  for (auto kind : {proto::PIPEDREAM_ASYNC, proto::PIPEDREAM_2BW, proto::APAPO}) {
    ResolvedScenario one = uniform(kind, K, M, T, f, b);
    if (kind == proto::APAPO) one.schedule.max_staleness = K;
    for (ModelLayer& layer : one.model.layers) layer.parameter_bytes = 4;
    const ResolvedScenario many = replicated_setup(one, D);
    SCOPED_TRACE(proto::ScheduleKind_Name(kind));
    const Program single = build_program(one), replicated = build_program(many);
    EXPECT_NEAR(makespan(many), makespan(one), 1e-9);

    int updates = 0;
    for (const Instruction& instr : single.instructions) updates += instr.op == Op::kOptim;
    int optims = 0;
    for (int32_t i = 0; i < replicated.size(); ++i) {
      const Instruction& instr = replicated.instructions[i];
      if (instr.op == Op::kAllreduce) {
        const auto members = replicated.members_of_group(replicated.group[i]);
        ASSERT_EQ(static_cast<int>(members.size()), D);
        for (int r = 0; r < D; ++r) {  // one member per replica, of the same stage
          EXPECT_EQ(replicated.instructions[members[r]].device, instr.stage + r * K);
        }
      }
      if (instr.op != Op::kOptim) continue;
      ++optims;
      const auto deps = replicated.deps_of(i);
      ASSERT_EQ(deps.size(), 1u);
      EXPECT_EQ(replicated.instructions[deps[0]].op, Op::kAllreduce);
    }
    EXPECT_EQ(optims, D * updates);

    // Each replica's compute lane is the single pipeline's, shifted to its devices.
    for (int s = 0; s < K; ++s) {
      const int l0 = s * kLaneCount + static_cast<int>(Lane::kCompute);
      for (int r = 0; r < D; ++r) {
        const int l = (s + r * K) * kLaneCount + static_cast<int>(Lane::kCompute);
        ASSERT_EQ(replicated.lane_begin[l + 1] - replicated.lane_begin[l],
                  single.lane_begin[l0 + 1] - single.lane_begin[l0]);
        for (int k = 0; k < single.lane_begin[l0 + 1] - single.lane_begin[l0]; ++k) {
          const Instruction& a = single.instructions[single.lane_begin[l0] + k];
          const Instruction& c = replicated.instructions[replicated.lane_begin[l] + k];
          EXPECT_EQ(a.op, c.op);
          EXPECT_EQ(a.iteration, c.iteration);
          EXPECT_DOUBLE_EQ(a.compute_s, c.compute_s);
        }
      }
    }
  }
}

// Stashed weight versions are resident on every replica of the stage.
TEST(AsyncPipeline, EveryReplicaStashesItsVersions) {
  const int K = 3, M = 6, D = 2;
  ResolvedScenario one = uniform(proto::PIPEDREAM_ASYNC, K, M, 2, 1e-3, 2e-3);
  for (ModelLayer& layer : one.model.layers) layer.parameter_bytes = 4000;
  const Program a = build_program(one), b = build_program(replicated_setup(one, D));
  for (int d = 0; d < K * D; ++d) {
    EXPECT_EQ(b.static_bytes[d], a.static_bytes[d % K]) << "device " << d;
  }
}

TEST(AsyncPipelineCli, BadInputNamesTheField) {
  const testing::TempDir dir;
  const std::string head = R"(name: "a"
cluster { nodes: 1 gpus_per_node: 4 gpu { name: "g" peak_tflops: 100 memory_gib: 80 }
  intra_node { bandwidth_gbytes_per_s: 100 latency_us: 1 } }
model { layers { name: "a" fwd_ms: 1 bwd_ms: 2 } layers { name: "b" fwd_ms: 1 bwd_ms: 2 } layer_batch: 4 }
)";
  const struct {
    std::string rest, field, problem;
  } cases[] = {
      {"training { global_batch: 16 microbatches: 4 }\n"
       "schedule { kind: ONE_F_ONE_B stages: 2 max_staleness: 1 }",
       "schedule.max_staleness", "only APAPO"},
      {"training { global_batch: 16 microbatches: 1 }\nschedule { kind: PIPEDREAM_2BW stages: 2 }",
       "training.microbatches", "at least as many microbatches as stages"},
      {"training { global_batch: 16 microbatches: 4 }\n"
       "schedule { kind: APAPO stages: 2 max_in_flight_iterations: 0 }",
       "schedule.max_in_flight_iterations", "must be positive"},
  };
  for (const auto& c : cases) {
    const std::string path = dir.write("a.textproto", head + c.rest + "\n").string();
    const testing::CliResult r = testing::run_pipetwin("simulate " + path);
    EXPECT_EQ(r.exit_code, 2) << c.rest << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.field));
    EXPECT_THAT(r.err, HasSubstr(c.problem));
  }
}

}  // namespace
}  // namespace pipetwin
