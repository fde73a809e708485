// Layer cost curves: fixed + per sample, measured points (piecewise-linear, extrapolated
// linearly), sums of them, and how scenarios give them.
#include "sim/spec/cost_curve.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "cli_runner.h"
#include "sim/model/model_sources.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

TEST(CostCurve, LinearHasAFixedPartAndZeroForNoSamples) {
  const CostCurve c = CostCurve::linear(2.0, 0.5);
  EXPECT_DOUBLE_EQ(c.seconds(1), 2.5);
  EXPECT_DOUBLE_EQ(c.seconds(8), 6.0);
  EXPECT_EQ(c.seconds(0), 0.0);
}

TEST(CostCurve, MeasuredPointsInterpolateAndExtrapolate) {
  const CostCurve c = CostCurve::measured({{8, 4.0}, {2, 2.0}, {4, 2.5}});  // any order
  EXPECT_DOUBLE_EQ(c.seconds(2), 2.0);
  EXPECT_DOUBLE_EQ(c.seconds(3), 2.25);  // between 2 and 4
  EXPECT_DOUBLE_EQ(c.seconds(6), 3.25);  // between 4 and 8
  EXPECT_DOUBLE_EQ(c.seconds(16), 7.0);  // the last segment's slope, 0.375 per sample
  EXPECT_DOUBLE_EQ(c.seconds(1), 1.75);  // the first segment's slope, backwards
  EXPECT_DOUBLE_EQ(CostCurve::measured({{4, 2.0}}).seconds(6), 3.0);  // one point: proportional
}

TEST(CostCurve, SumIsPointwiseOnRandomCurves) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.1, 5);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<CostCurve> parts;
    for (int k = 0; k < 3; ++k) {
      if (rng() % 2) {
        parts.push_back(CostCurve::linear(u(rng), u(rng)));
      } else {
        // Batches from 1 up and times that grow, as measurements do.
        std::vector<std::pair<double, double>> points;
        const int n = 1 + rng() % 3;
        double batch = 1, time = u(rng);
        for (int p = 0; p < n; ++p) {
          points.emplace_back(batch, time);
          batch += 1 + rng() % 7;
          time += u(rng);
        }
        parts.push_back(CostCurve::measured(points));
      }
    }
    CostCurve sum;
    for (const CostCurve& c : parts) sum.add(c);
    for (double b : {1.0, 2.0, 3.5, 7.0, 20.0, 64.0}) {
      double expected = 0;
      for (const CostCurve& c : parts) expected += c.seconds(b);
      EXPECT_NEAR(sum.seconds(b), expected, 1e-12 * expected) << "trial " << trial << " b " << b;
    }
  }
}

// Scenarios: fixed/per-sample and measured layers, and the errors.
const char* kCurves = R"(cluster { nodes: 1 gpus_per_node: 2 gpu { peak_tflops: 100 memory_gib: 80 }
  intra_node { bandwidth_gbytes_per_s: 100 } }
model {
  layers { fwd_fixed_ms: 1 fwd_per_sample_ms: 0.5 bwd_fixed_ms: 2 bwd_per_sample_ms: 1 }
  layers { cost_points { batch: 2 fwd_ms: 2 bwd_ms: 4 } cost_points { batch: 8 fwd_ms: 5 bwd_ms: 10 } }
}
training { global_batch: 16 microbatches: 4 }
schedule { kind: GPIPE stages: 2 }
)";

TEST(CostCurveScenario, NonlinearLayersRun) {
  const testing::TempDir dir;
  const auto path = dir.write("curves.textproto", kCurves);
  const testing::CliResult r = testing::run_pipetwin("simulate " + path.string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Microbatches of 4: stage 0 takes 1 + 2 = 3 ms forward and 2 + 4 = 6 ms backward;
  // stage 1 (measured) 3 ms and 6 ms. GPipe, equal stages: (4 + 2 - 1) * 9 ms.
  EXPECT_NEAR(nlohmann::json::parse(r.out)["iteration_time_s"].get<double>(), 0.045, 1e-12);
}

TEST(CostCurveScenario, TwoWaysForOneCostIsAnError) {
  const testing::TempDir dir;
  std::string text = kCurves;
  text.replace(text.find("fwd_fixed_ms: 1"), 15, "fwd_ms: 3 fwd_fixed_ms: 1");
  const auto path = dir.write("bad.textproto", text);
  const testing::CliResult r = testing::run_pipetwin("simulate " + path.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(":4: model.layers[0].fwd_ms: give only one of"));
}

TEST(CostCurveScenario, RepeatedMeasuredBatchIsAnError) {
  const testing::TempDir dir;
  std::string text = kCurves;
  text.replace(text.find("batch: 8"), 8, "batch: 2");
  const auto path = dir.write("bad.textproto", text);
  const testing::CliResult r = testing::run_pipetwin("simulate " + path.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("model.layers[1].cost_points[1].batch: batch 2 measured twice"));
}

}  // namespace
}  // namespace pipetwin

namespace pipetwin {
namespace {

TEST(ZooCostCurve, UtilisationAndLaunchOverheadAreFixedCostsPerMicrobatch) {
  proto::Zoo zoo;
  zoo.set_name("mlp");
  zoo.set_layers(2);
  zoo.set_hidden(256);
  zoo.set_input_dim(256);
  zoo.set_output_dim(256);
  zoo.set_utilization_half_batch(4);
  zoo.set_launch_overhead_us(50);
  const ModelSpec spec = model_from_zoo(zoo);
  const double flops = 2.0 * 256 * 256;
  for (const ModelLayer& layer : spec.layers) {
    EXPECT_DOUBLE_EQ(layer.fwd.flops_per_sample, flops);
    EXPECT_DOUBLE_EQ(layer.fwd.fixed_flops, 4 * flops);
    EXPECT_DOUBLE_EQ(layer.fwd.fixed_s, 50e-6);
    EXPECT_DOUBLE_EQ(layer.bwd.fixed_s, 100e-6);
    // b samples at efficiency * b / (b + 4): the time of b + 4 samples, plus the launch.
    const double device = 1e12;
    EXPECT_NEAR(layer.fwd.seconds(4, device), 8 * flops / device + 50e-6, 1e-18);
  }
}

}  // namespace
}  // namespace pipetwin
