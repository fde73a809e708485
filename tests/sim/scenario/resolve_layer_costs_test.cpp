// A layer's costs alone: each direction given exactly one way, the weight-gradient part
// within the backward, cost points measured once per batch.
#include "sim/scenario/resolve_layer_costs.h"

#include <gtest/gtest.h>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// The error for the layer written on line 2, or "" when it is valid.
std::string layer_error(const std::string& layer) {
  const LoadedScenario loaded =
      parse_scenario("model {\n  layers { " + layer + " }\n}", "m.textproto", ".", false, {});
  try {
    check_layer_cost(ScenarioChecker(loaded), loaded.scenario.model().layers(0), "model.layers[0]");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CheckLayerCost, EachDirectionIsGivenExactlyOneWay) {
  EXPECT_EQ(layer_error("fwd_ms: 1 bwd_ms: 2"), "");
  EXPECT_EQ(layer_error("fwd_fixed_ms: 1 fwd_per_sample_ms: 0.1 bwd_ms: 2"), "");
  EXPECT_EQ(layer_error("bwd_ms: 2"),
            "m.textproto:2: model.layers[0].fwd_ms: missing (give fwd_ms, fwd_fixed_ms/"
            "fwd_per_sample_ms, or cost_points)");
  EXPECT_EQ(layer_error("fwd_ms: 1 bwd_ms: 2 bwd_fixed_ms: 1"),
            "m.textproto:2: model.layers[0].bwd_ms: give only one of bwd_ms, bwd_fixed_ms/"
            "bwd_per_sample_ms, cost_points");
  EXPECT_EQ(layer_error("fwd_ms: -1 bwd_ms: 2"),
            "m.textproto:2: model.layers[0].fwd_ms: must not be negative (got -1)");
}

TEST(CheckLayerCost, TheWeightGradientIsPartOfTheBackward) {
  EXPECT_EQ(layer_error("fwd_ms: 1 bwd_ms: 2 bwd_weight_ms: 1"), "");
  EXPECT_EQ(layer_error("fwd_ms: 1 bwd_ms: 2 bwd_weight_ms: 3"),
            "m.textproto:2: model.layers[0].bwd_weight_ms: exceeds bwd_ms, the whole backward");
  EXPECT_EQ(layer_error("fwd_ms: 1 bwd_ms: 2 activation_bytes: 10 bwd_weight_stash_bytes: 11"),
            "m.textproto:2: model.layers[0].bwd_weight_stash_bytes: exceeds the layer's stash "
            "(10 bytes)");
}

TEST(CheckLayerCost, CostPointsAreMeasuredOncePerBatch) {
  const std::string point = "cost_points { batch: 4 fwd_ms: 1 bwd_ms: 2 } ";
  EXPECT_EQ(layer_error(point + "cost_points { batch: 8 fwd_ms: 2 bwd_ms: 4 }"), "");
  EXPECT_EQ(layer_error(point + point),
            "m.textproto:2: model.layers[0].cost_points[1].batch: batch 4 measured twice");
  EXPECT_EQ(layer_error(point + "cost_points { batch: 8 fwd_ms: 2 bwd_ms: 4 bwd_weight_ms: 1 }"),
            "m.textproto:2: model.layers[0].cost_points: give bwd_weight_ms at every point or "
            "at none");
}

}  // namespace
}  // namespace pipetwin
