// Gradient reductions after the flush: on an interleaved pipeline (two chunks per device) of
// tensor-parallel pairs and data-parallel replicas, every chunk's all-reduce starts once its
// device's last backward has ended, the data-parallel lane runs them one after another, and the
// iteration ends with the slowest device's (closed form on the analytic engine's own backward
// ends). Off, the later chunk's all-reduce starts under the earlier chunk's backwards (tensor
// parallelism puts the data-parallel lane in the order the backwards end): the option is not a
// no-op. The tune evaluator prices it as the engine does.
#include "sim/schedule/reduce_after_flush.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/tune/fast_estimate.h"
#include "sim/tune/tune_search.h"
#include "sim/tune/tune_space.h"

namespace pipetwin {
namespace {

constexpr int kStages = 2, kReplicas = 2, kTensorParallel = 2, kLayersPerChunk = 2;
constexpr double kFwdS = 1e-3, kBwdS = 2e-3;     // per layer and sample
constexpr int64_t kParameterBytes = 40'000'000;  // per layer
const LinkSpec kLink{50e9, 5e-6};

// Two replicas of a 2-stage interleaved pipeline of identical layers, 2 chunks per device,
// each device a tensor-parallel pair, on one node of identical links, gradients reduced in
// one block per chunk.
ResolvedScenario interleaved(bool after_flush) {
  ResolvedScenario setup;
  setup.name = "interleaved";
  const int devices = kStages * kReplicas * kTensorParallel;
  for (int d = 0; d < devices; ++d) {
    setup.cluster.devices.push_back({d, 0, "gpu" + std::to_string(d), 1e15, 1e15});
  }
  setup.cluster.gpus_per_node = devices;
  setup.cluster.intra_node = kLink;
  const int layers = 2 * kStages * kLayersPerChunk;
  for (int l = 0; l < layers; ++l) {
    ModelLayer layer;
    layer.name = "l" + std::to_string(l);
    layer.fwd.seconds_per_sample = kFwdS;
    layer.bwd.seconds_per_sample = kBwdS;
    layer.parameter_bytes = kParameterBytes;
    layer.tp_fwd_collectives = 1;
    layer.tp_bwd_collectives = 1;
    layer.tp_allreduce_bytes_per_sample = 1e6;
    if (l + 1 < layers) layer.consumers = {l + 1};
    setup.model.layers.push_back(layer);
  }
  setup.training = {4 * kReplicas, 4, 1, proto::SGD, kReplicas};
  setup.training.tensor_parallel = kTensorParallel;
  setup.training.grad_bucket_bytes = 0;
  setup.training.grad_reduce_after_flush = after_flush;
  setup.schedule.kind = proto::INTERLEAVED_ONE_F_ONE_B;
  setup.schedule.stages = kStages;
  setup.schedule.virtual_stages = 2;
  return setup;
}

double ring_allreduce_s(double bytes, int n) {
  return 2.0 * (n - 1) / n * bytes / kLink.bandwidth_bytes_per_s + 2.0 * (n - 1) * kLink.latency_s;
}

struct Timed {
  Program program;
  ExecutionTimes times;
};

Timed timed(bool after_flush) {
  const ResolvedScenario setup = interleaved(after_flush);
  Timed t{build_program(setup), {}};
  t.times = run_analytic(t.program, setup.cluster);
  return t;
}

// Each device's last backward end.
std::map<int32_t, double> flush_ends(const Timed& t) {
  std::map<int32_t, double> flush;
  for (int32_t i = 0; i < t.program.size(); ++i) {
    const Instruction& c = t.program.instructions[i];
    if (computes_weight_gradient(c.op)) {
      flush[c.device] = std::max(flush[c.device], t.times.end_s[i]);
    }
  }
  return flush;
}

TEST(ReduceAfterFlush, EveryReductionStartsAfterItsDevicesLastBackward) {
  for (bool after_flush : {false, true}) {
    const Timed t = timed(after_flush);
    const auto flush = flush_ends(t);
    int reductions = 0, early = 0;
    for (int32_t i = 0; i < t.program.size(); ++i) {
      const Instruction& c = t.program.instructions[i];
      if (c.op != Op::kAllreduce || !c.data_parallel) continue;
      ++reductions;
      if (t.times.start_s[i] < flush.at(c.device) - 1e-12) ++early;
    }
    EXPECT_EQ(reductions, kStages * kReplicas * kTensorParallel * 2);  // one per chunk, GPU
    if (after_flush) {
      EXPECT_EQ(early, 0);
    } else {
      EXPECT_EQ(early, kStages * kReplicas * kTensorParallel);  // each GPU's later chunk
    }
  }
}

TEST(ReduceAfterFlush, TheIterationEndsWithTheSlowestDevicesReductionsInARow) {
  const Timed t = timed(true);
  // Each GPU holds 1/T of its chunks' weights.
  const double chunk_reduction =
      ring_allreduce_s(kLayersPerChunk * kParameterBytes / kTensorParallel, kReplicas);
  double expected = 0;
  for (const auto& [device, end] : flush_ends(t)) {
    expected = std::max(expected, end + 2 * chunk_reduction);
  }
  const double iteration = *std::max_element(t.times.end_s.begin(), t.times.end_s.end());
  EXPECT_NEAR(iteration, expected, 1e-12);
}

// Without tensor parallelism the fast evaluator equals the engine; with it (its backward
// collectives share the lanes with the reductions, which the evaluator prices apart) it is
// off by a few tenths of a percent either way, and the option moves both alike.
TEST(ReduceAfterFlush, TheTuneEvaluatorPricesItAsTheEngine) {
  for (const char* kind : {"INTERLEAVED_ONE_F_ONE_B", "ZB_V", "ONE_F_ONE_B"}) {
    for (int tp : {1, 2}) {
      double fast_s[2], engine_s[2];
      for (bool after : {false, true}) {
        const std::string k = kind;
        std::vector<std::string> set = {
            "schedule.kind=" + k,
            "schedule.stages=2",
            "training.tensor_parallel=" + std::to_string(tp),
            "training.data_parallel=2",
            "training.microbatches=4",
            "training.global_batch=16",
            "training.grad_bucket_mb=0",
            std::string("training.grad_reduce_after_flush=") + (after ? "true" : "false")};
        if (k == "INTERLEAVED_ONE_F_ONE_B") set.push_back("schedule.virtual_stages=2");
        ResolvedScenario setup = resolve_scenario(load_scenario("builtin:gpt-8gpu-1f1b", set));
        const std::optional<FastEstimate> fast = estimate_fast(setup);
        ASSERT_TRUE(fast.has_value()) << k;
        fast_s[after] = fast->iteration_time_s;
        engine_s[after] =
            simulate_config(setup, config_of(setup), Evaluator::kAnalytic).iteration_time_s;
        if (tp == 1) {
          EXPECT_NEAR(fast_s[after], engine_s[after], 1e-6 * engine_s[after])
              << k << " after the flush: " << after;
        }
      }
      EXPECT_NEAR(fast_s[1] - fast_s[0], engine_s[1] - engine_s[0], 1e-6 * engine_s[0])
          << kind << " TP " << tp;
    }
  }
}

}  // namespace
}  // namespace pipetwin
