// Trace-driven calibration (sim/fit): a timeline simulated from known costs, links and
// interference, with noise, is fitted back; the fitted scenario predicts that run.
#include "sim/fit/trace_fit.h"

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "sim/fit/least_squares.h"
#include "sim/fit/makespan_match.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/driver/simulate.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// Three stages of two layers with fixed + per-sample costs, UMPIPE cuts of several sizes
// (so that fixed and per-sample parts can be told apart, and messages differ in size),
// a link with latency, and interference both ways.
const std::string kCommon = R"(
name: "truth"
cluster {
  nodes: 1 gpus_per_node: 3
  gpu { name: "g" peak_tflops: 1 memory_gib: 80 }
  intra_node { bandwidth_gbytes_per_s: 2 latency_us: 300 }
  interference { compute_slowdown: 0.35 transfer_slowdown: 0.6 }
}
model {
  layers { name: "a" fwd_fixed_ms: 1.0 fwd_per_sample_ms: 0.5 bwd_fixed_ms: 2 bwd_per_sample_ms: 1.0 activation_bytes: 1000000 parameter_bytes: 4000 optim_ms: 0.4 }
  layers { name: "b" fwd_fixed_ms: 0.5 fwd_per_sample_ms: 0.25 bwd_fixed_ms: 1 bwd_per_sample_ms: 0.5 activation_bytes: 1000000 parameter_bytes: 4000 optim_ms: 0.4 }
  layers { name: "c" fwd_fixed_ms: 0.2 fwd_per_sample_ms: 0.8 bwd_fixed_ms: 0.4 bwd_per_sample_ms: 1.6 activation_bytes: 2000000 parameter_bytes: 8000 optim_ms: 0.2 }
  layers { name: "d" fwd_fixed_ms: 0.2 fwd_per_sample_ms: 0.8 bwd_fixed_ms: 0.4 bwd_per_sample_ms: 1.6 activation_bytes: 2000000 parameter_bytes: 8000 optim_ms: 0.2 }
  layers { name: "e" fwd_fixed_ms: 2.0 fwd_per_sample_ms: 0.1 bwd_fixed_ms: 4 bwd_per_sample_ms: 0.2 activation_bytes: 500000 }
  layers { name: "f" fwd_fixed_ms: 2.0 fwd_per_sample_ms: 0.1 bwd_fixed_ms: 4 bwd_per_sample_ms: 0.2 }
  layer_batch: 1
}
training { global_batch: 24 microbatches: 4 iterations: 3 optimizer: SGD }
)";
const std::string kTruth = kCommon + R"(
schedule {
  kind: UMPIPE stages: 3 partition: [2, 2, 2]
  stage_plans { forward_sizes: [2, 6, 8, 8] backward_sizes: [4, 4, 8, 8] }
  stage_plans { forward_sizes: [1, 3, 4, 8, 8] backward_sizes: [8, 8, 6, 2] }
  stage_plans { forward_sizes: [8, 16] backward_sizes: [4, 8, 6, 6] }
}
)";

// What a scenario with the truth's cluster fields but an unrelated cost model looks like
// to the fit: the fit must not need the true costs to recover them.
LoadedScenario loaded(const std::string& text, const std::vector<std::string>& sets = {}) {
  return parse_scenario(text, "truth.textproto", ".", false, sets);
}

Timeline noisy_run(const std::string& text, double noise, uint32_t seed) {
  Timeline t = simulate(loaded(text), {}).timeline;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(-noise, noise);
  for (Span& span : t.spans) span.end_s = span.start_s + span.duration_s() * (1 + jitter(rng));
  return t;
}

TEST(TraceFit, RecoversCostsLinksAndInterference) {
  const Timeline measured = noisy_run(kTruth, 0.01, 7);
  // The fit starts from wrong costs, a wrong link and no interference.
  const ResolvedScenario prior = resolve_scenario(loaded(
      kTruth,
      {"cluster.intra_node.latency_us=5", "cluster.intra_node.bandwidth_gbytes_per_s=50",
       "cluster.interference.compute_slowdown=0", "cluster.interference.transfer_slowdown=0"}));
  const TraceFit fit = fit_trace(prior, measured, "measured.timeline");
  EXPECT_NEAR(fit.interference.compute_slowdown, 0.35, 0.05);
  EXPECT_NEAR(fit.interference.transfer_slowdown, 0.6, 0.08);
  EXPECT_NEAR(fit.intra_node.latency_s, 300e-6, 30e-6);
  EXPECT_NEAR(fit.intra_node.bandwidth_bytes_per_s, 2e9, 0.1e9);
  EXPECT_FALSE(fit.intra_node.bandwidth_kept);
  // Stage 1 (layers c, d) forward: 0.4 ms + 1.6 ms per sample; backward twice that.
  const ChunkCostFit& fwd1 = fit.compute[2];
  ASSERT_TRUE(fwd1.linear);
  EXPECT_NEAR(fwd1.fixed_s, 0.4e-3, 0.1e-3);
  EXPECT_NEAR(fwd1.per_sample_s, 1.6e-3, 0.03e-3);
  const ChunkCostFit& bwd2 = fit.compute[5];
  EXPECT_NEAR(bwd2.fixed_s, 8e-3, 0.3e-3);
  EXPECT_NEAR(bwd2.per_sample_s, 0.4e-3, 0.05e-3);
  EXPECT_NEAR(fit.optim_s[0], 0.8e-3, 0.02e-3);
}

TEST(TraceFit, FittedScenarioSimulatesTheRunItWasFittedOn) {
  const Timeline measured = noisy_run(kTruth, 0.03, 11);
  const LoadedScenario prior_loaded =
      loaded(kTruth, {"cluster.intra_node.latency_us=5", "cluster.interference.compute_slowdown=0",
                      "cluster.interference.transfer_slowdown=0"});
  const ResolvedScenario prior = resolve_scenario(prior_loaded);
  const TraceFit fit = fit_trace(prior, measured, "measured.timeline");
  const proto::Scenario fitted = fitted_scenario(prior_loaded.scenario, prior, fit);
  std::string text;
  google::protobuf::TextFormat::PrintToString(fitted, &text);
  const SimulationResult again = simulate(loaded(describe_fit(fit, {"m.timeline"}) + text), {});
  const double predicted = again.times.span_s();
  EXPECT_NEAR(predicted / fit.measured_makespan_s, 1.0, 0.01);
  EXPECT_EQ(again.setup.schedule.partition, (std::vector<int32_t>{2, 2, 2}));
}

TEST(TraceFit, SeveralRunsAreFittedTogetherAndTheMedianMakespanMatched) {
  const Timeline a = noisy_run(kTruth, 0.02, 1), b = noisy_run(kTruth, 0.02, 2);
  Timeline slow = noisy_run(kTruth, 0.02, 3);
  for (Span& span : slow.spans) span.start_s *= 1.1, span.end_s *= 1.1;  // a slower moment
  const ResolvedScenario prior = resolve_scenario(loaded(kTruth));
  const TraceFit fit = fit_trace(prior, {{&a, "a"}, {&b, "b"}, {&slow, "slow"}});
  ASSERT_EQ(fit.measured_makespans_s.size(), 3u);
  std::vector<double> sorted = fit.measured_makespans_s;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(fit.measured_makespan_s, sorted[1]);
  EXPECT_EQ(fit.compute[0].spans, 3 * fit_trace(prior, a, "a").compute[0].spans);
  EXPECT_THAT(describe_fit(fit, {"a", "b", "slow"}), ::testing::HasSubstr("--from a --from b"));
}

TEST(TraceFit, MakespanMatchAddsTheUnexplainedWaitingToTheWakeupGap) {
  proto::Scenario scenario = loaded(kTruth).scenario;
  const double simulated = simulate(loaded(kTruth), {}).times.span_s();
  const MakespanMatch longer = match_makespan(scenario, ".", 1.05 * simulated);
  EXPECT_NEAR(longer.simulated_after_s / (1.05 * simulated), 1.0, 1e-3);
  EXPECT_GT(longer.wakeup_after_s, longer.wakeup_before_s);
  EXPECT_DOUBLE_EQ(scenario.cluster().dispatch().wakeup_us(), longer.wakeup_after_s * 1e6);
  // A run faster than the simulation lowers the gap again, but not below 0.
  const MakespanMatch back = match_makespan(scenario, ".", 1.02 * simulated);
  EXPECT_NEAR(back.simulated_after_s / (1.02 * simulated), 1.0, 1e-3);
  EXPECT_LT(back.wakeup_after_s, longer.wakeup_after_s);
  proto::Scenario same = loaded(kTruth).scenario;
  const MakespanMatch shorter = match_makespan(same, ".", 0.9 * simulated);
  EXPECT_EQ(shorter.wakeup_after_s, 0);
  EXPECT_NEAR(shorter.simulated_after_s, simulated, 1e-12);
}

TEST(TraceFit, OneMicrobatchSizeScalesTheScenarioCurve) {
  // 1F1B, equal microbatches: every span has 6 samples.
  const std::string text =
      kCommon + "schedule { kind: ONE_F_ONE_B stages: 3 partition: [2, 2, 2] }";
  const Timeline measured = noisy_run(text, 0.0, 1);
  const LoadedScenario halved =
      loaded(text, {"model.layers[0].fwd_fixed_ms=0.5", "model.layers[0].fwd_per_sample_ms=0.25",
                    "model.layers[1].fwd_fixed_ms=0.25", "model.layers[1].fwd_per_sample_ms=0.125",
                    "cluster.interference.compute_slowdown=0",
                    "cluster.interference.transfer_slowdown=0"});
  const TraceFit fit = fit_trace(resolve_scenario(halved), measured, "m.timeline");
  const ChunkCostFit& fwd0 = fit.compute[0];
  EXPECT_FALSE(fwd0.linear);
  EXPECT_EQ(fwd0.sizes, std::vector<int32_t>{6});
  EXPECT_NEAR(fwd0.scale, 2.0, 0.15);  // the run took twice what the halved costs say
  // Activations of two sizes (6 and 12 MB) still tell bandwidth from latency.
  EXPECT_FALSE(fit.intra_node.bandwidth_kept);
  EXPECT_NEAR(fit.intra_node.bandwidth_bytes_per_s, 2e9, 0.02e9);
}

// A noisy profile of layer a, 8 samples measured faster than 4: its last segment, extended,
// crosses zero before 16 samples. The fitted file still holds no negative cost, and loads.
TEST(TraceFit, AProfileThatFallsPastItsLastPointWritesNoNegativeCost) {
  const std::string text =
      kCommon + "schedule { kind: ONE_F_ONE_B stages: 3 partition: [2, 2, 2] }";
  const Timeline measured = noisy_run(text, 0.0, 1);
  std::string profiled = text;
  const std::string costs =
      "fwd_fixed_ms: 1.0 fwd_per_sample_ms: 0.5 bwd_fixed_ms: 2 bwd_per_sample_ms: 1.0";
  profiled.replace(profiled.find(costs), costs.size(),
                   "cost_points { batch: 4 fwd_ms: 4 bwd_ms: 8 } "
                   "cost_points { batch: 8 fwd_ms: 1 bwd_ms: 2 }");
  const LoadedScenario prior = loaded(profiled);
  const ResolvedScenario setup = resolve_scenario(prior);
  ASSERT_LT(setup.model.layers[0].fwd.seconds(16, 1e12), 0);
  const proto::Scenario out =
      fitted_scenario(prior.scenario, setup, fit_trace(setup, measured, "m.timeline"));
  for (const proto::Layer& layer : out.model().layers()) {
    for (const proto::CostPoint& point : layer.cost_points()) {
      EXPECT_GE(point.fwd_ms(), 0) << layer.name() << " at " << point.batch();
      EXPECT_GE(point.bwd_ms(), 0) << layer.name() << " at " << point.batch();
    }
  }
  std::string written;
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(out, &written));
  EXPECT_NO_THROW(resolve_scenario(loaded(written)));
}

TEST(TraceFit, RejectsATimelineOfAnotherScenario) {
  const Timeline measured = noisy_run(kTruth, 0, 1);
  const ResolvedScenario two =
      resolve_scenario(loaded(kCommon + "schedule { kind: GPIPE stages: 2 partition: [3, 3] }",
                              {"cluster.gpus_per_node=2"}));
  try {
    fit_trace(two, measured, "other.timeline");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("other.timeline"), std::string::npos) << e.what();
  }
}

TEST(LeastSquares, NonNegativeColumnsAndOutliers) {
  LinearRows rows;
  rows.columns = 2;
  for (int k = 0; k < 40; ++k) rows.add({1.0, static_cast<double>(k)}, 3.0 + 0.5 * k);
  rows.add({1.0, 5.0}, 500.0);  // a preempted op
  const LinearFit fit = fit_least_squares(rows, {0, 1});
  EXPECT_EQ(fit.outliers, 1);
  EXPECT_NEAR(fit.coefficients[0], 3.0, 1e-9);
  EXPECT_NEAR(fit.coefficients[1], 0.5, 1e-9);
  LinearRows falling;
  falling.columns = 2;
  for (int k = 0; k < 10; ++k) falling.add({1.0, static_cast<double>(k)}, 10.0 - k);
  const LinearFit clamped = fit_least_squares(falling, {1}, 0);
  EXPECT_EQ(clamped.coefficients[1], 0);  // a negative slope is not allowed: dropped
  EXPECT_NEAR(clamped.coefficients[0], 5.5, 1e-9);
}

// One microbatch size cannot tell a pass's fixed cost from its cost per sample: the fit
// scales the scenario's curve. A run with half the microbatches, each twice the size, joins
// the compute fit and recovers both parts; the makespan to match stays the scenario's own.
TEST(TraceFit, ARunAtAnotherMicrobatchSizeTellsFixedFromPerSampleCosts) {
  const std::string truth = R"(
name: "sizes"
cluster { nodes: 1 gpus_per_node: 2 gpu { name: "g" peak_tflops: 1 memory_gib: 80 }
          intra_node { bandwidth_gbytes_per_s: 2 latency_us: 100 } }
model {
  layers { fwd_fixed_ms: 2 fwd_per_sample_ms: 0.5 bwd_fixed_ms: 4 bwd_per_sample_ms: 1 activation_bytes: 100000 }
  layers { fwd_fixed_ms: 1 fwd_per_sample_ms: 1 bwd_fixed_ms: 2 bwd_per_sample_ms: 2 activation_bytes: 100000 }
  layer_batch: 1
}
training { global_batch: 16 microbatches: 4 iterations: 2 optimizer: SGD }
schedule { kind: GPIPE stages: 2 }
)";
  const Timeline own = simulate(loaded(truth), {}).timeline;
  const Timeline resized = simulate(loaded(truth, {"training.microbatches=2"}), {}).timeline;
  // The prior: every cost per sample, none fixed.
  const ResolvedScenario prior = resolve_scenario(
      loaded(truth, {"model.layers[0].fwd_fixed_ms=0", "model.layers[0].bwd_fixed_ms=0",
                     "model.layers[1].fwd_fixed_ms=0", "model.layers[1].bwd_fixed_ms=0"}));
  const TraceFit one = fit_trace(prior, {{&own, "own"}});
  EXPECT_FALSE(one.compute[0].linear);
  const TraceFit two = fit_trace(prior, {{&own, "own"}}, {{&resized, "resized"}});
  ASSERT_TRUE(two.compute[0].linear);
  EXPECT_NEAR(two.compute[0].fixed_s, 2e-3, 1e-6);  // stage 0 forward
  EXPECT_NEAR(two.compute[0].per_sample_s, 0.5e-3, 1e-7);
  EXPECT_NEAR(two.compute[3].fixed_s, 2e-3, 1e-6);  // stage 1 backward
  EXPECT_NEAR(two.compute[3].per_sample_s, 2e-3, 1e-7);
  EXPECT_EQ(two.measured_makespans_s.size(), 1u);
  EXPECT_DOUBLE_EQ(two.measured_makespan_s, one.measured_makespan_s);
}

// A tensor-parallel MLP (column- then row-parallel pairs) with measured costs of its whole
// layers, simulated, then made to look like real ranks: each pass holds its all-reduces
// (the Program's ALLREDUCE after it is empty). The fit takes the modeled all-reduces out of
// the passes and writes whole-layer costs, which the fitted scenario divides again.
const std::string kTensorParallelTruth = R"(
name: "tp-truth"
cluster {
  nodes: 1 gpus_per_node: 4
  gpu { name: "g" peak_tflops: 1 memory_gib: 80 }
  intra_node { bandwidth_gbytes_per_s: 0.5 latency_us: 200 }
}
model {
  zoo { name: "mlp" layers: 4 hidden: 64 input_dim: 32 output_dim: 8 }
  layers { cost_points { batch: 2 fwd_ms: 4 bwd_ms: 8 } cost_points { batch: 4 fwd_ms: 6 bwd_ms: 12 } }
  layers { cost_points { batch: 2 fwd_ms: 2 bwd_ms: 4 } cost_points { batch: 4 fwd_ms: 3 bwd_ms: 6 } }
  layers { cost_points { batch: 2 fwd_ms: 4 bwd_ms: 8 } cost_points { batch: 4 fwd_ms: 6 bwd_ms: 12 } }
  layers { cost_points { batch: 2 fwd_ms: 2 bwd_ms: 4 } cost_points { batch: 4 fwd_ms: 3 bwd_ms: 6 } }
  layer_batch: 1
}
training { global_batch: 16 microbatches: 4 iterations: 3 optimizer: SGD tensor_parallel: 2 }
schedule { kind: GPIPE stages: 2 }
)";

TEST(TraceFit, TensorParallelPassesAreFittedWithoutTheirCollectives) {
  const SimulationResult truth = simulate(loaded(kTensorParallelTruth), {});
  // Each tensor-parallel pass split 2 ways: 4.5 ms forward per GPU at 4 samples.
  for (const Span& span : truth.timeline.spans) {
    if (span.op == "FWD" && span.device == 0) {
      EXPECT_NEAR(span.duration_s(), 4.5e-3, 1e-9);
    }
  }
  Timeline measured = truth.timeline;
  int folded = 0;
  for (Span& reduce : measured.spans) {
    if (reduce.op != "ALLREDUCE") continue;
    for (Span& pass : measured.spans) {
      if ((pass.op == "FWD" || pass.op == "BWD") && pass.device == reduce.device &&
          std::abs(pass.end_s - reduce.start_s) < 1e-12) {
        pass.end_s = reduce.end_s;  // the pass ran its collectives
        reduce.end_s = reduce.start_s;
        ++folded;
        break;
      }
    }
  }
  EXPECT_GT(folded, 0);
  // From wrong forward costs (the first and third layers' doubled), the fit finds the
  // truth's whole-layer costs of each stage (split over its layers as the prior splits them).
  std::string wrong = kTensorParallelTruth;
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"fwd_ms: 4 ", "fwd_ms: 8 "}, {"fwd_ms: 6 ", "fwd_ms: 12 "}}) {
    for (size_t at = wrong.find(from); at != std::string::npos; at = wrong.find(from, at + 1)) {
      wrong.replace(at, from.size(), to);
    }
  }
  const LoadedScenario prior_loaded = loaded(wrong);
  const ResolvedScenario prior = resolve_scenario(prior_loaded);
  const TraceFit fit = fit_trace(prior, measured, "measured.timeline");
  const proto::Scenario fitted = fitted_scenario(prior_loaded.scenario, prior, fit);
  std::string text;
  google::protobuf::TextFormat::PrintToString(fitted, &text);
  const ResolvedScenario again = resolve_scenario(loaded(text));
  const double flops = 1e12;
  const auto stage_seconds = [&](bool forward, int first) {
    double sum = 0;
    for (int l = first; l < first + 2; ++l) {
      sum += (forward ? again.model.layers[l].fwd : again.model.layers[l].bwd).seconds(4, flops);
    }
    return sum;
  };
  for (int first : {0, 2}) {
    EXPECT_NEAR(stage_seconds(true, first), 9e-3, 0.1e-3) << first;
    EXPECT_NEAR(stage_seconds(false, first), 18e-3, 0.1e-3) << first;
  }
  EXPECT_EQ(again.model.layers[1].tp_fwd_collectives, 1);  // the zoo's structure stays
  EXPECT_NEAR(simulate(loaded(text), {}).times.span_s() / fit.measured_makespan_s, 1.0, 0.02);
}

// Expert parallelism needs the zoo's structure too (which layers hold experts, their
// all-to-alls): the zoo's layers take the measured costs.
TEST(MeasuredZoo, ExpertParallelismKeepsTheZoosStructureWithTheMeasuredCosts) {
  LoadedScenario moe = load_scenario("builtin:moe-ep2-pp2-cpu", {});
  const size_t count = resolve_scenario(moe).model.layers.size();
  for (size_t l = 0; l < count; ++l) {
    proto::Layer* layer = moe.scenario.mutable_model()->add_layers();
    proto::CostPoint* point = layer->add_cost_points();
    point->set_batch(4);
    point->set_fwd_ms(1);
    point->set_bwd_ms(2);
  }
  moe.scenario.mutable_model()->set_layer_batch(1);
  const ResolvedScenario setup = resolve_scenario(moe);
  int exchanging = 0;
  for (const ModelLayer& layer : setup.model.layers) {
    EXPECT_NEAR(layer.fwd.seconds(4, 1e12), 1e-3, 1e-12) << layer.name;
    exchanging += layer.ep_fwd_all_to_alls > 0;
  }
  EXPECT_GT(exchanging, 0);
}

TEST(MeasuredZoo, ZooWithLayersRunsTheArchitectureAndChecksTheCount) {
  const std::string zoo =
      "name: 'z' cluster { preset: 'cpu-host' gpus_per_node: 2 } model { zoo { name: 'mlp' "
      "layers: 2 hidden: 8 input_dim: 4 output_dim: 2 } %s } training { global_batch: 4 "
      "microbatches: 2 } schedule { kind: GPIPE stages: 2 }";
  auto with = [&](const std::string& layers) {
    char buffer[1024];
    std::snprintf(buffer, sizeof buffer, zoo.c_str(), layers.c_str());
    return std::string(buffer);
  };
  const size_t count = resolve_scenario(loaded(with(""))).model.layers.size();
  std::string measured;
  for (size_t l = 0; l < count; ++l) measured += "layers { fwd_ms: 1 bwd_ms: 2 } ";
  const ResolvedScenario setup = resolve_scenario(loaded(with(measured)));
  ASSERT_TRUE(setup.zoo.has_value());
  EXPECT_EQ(setup.model.layers.size(), count);
  EXPECT_DOUBLE_EQ(setup.model.layers[0].fwd.seconds(2, 1e12), 1e-3);  // the measured cost
  try {
    resolve_scenario(loaded(with(measured + "layers { fwd_ms: 1 bwd_ms: 2 }")));
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model.layers"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pipetwin
