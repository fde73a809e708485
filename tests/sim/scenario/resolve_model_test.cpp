// The model section alone: exactly one source of layers, explicit layers checked one by one,
// and a zoo model's measured layers matching its architecture.
#include "sim/scenario/resolve_model.h"

#include <gtest/gtest.h>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

ModelSpec resolve(const std::string& model) {
  const LoadedScenario loaded =
      parse_scenario("model {\n" + model + "\n}", "m.textproto", ".", false, {});
  return resolve_model(ScenarioChecker(loaded), loaded);
}

std::string error(const std::string& model) {
  try {
    resolve(model);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ResolveModel, ExplicitLayersInOrder) {
  const ModelSpec m = resolve(
      "layer_batch: 1\n"
      "layers { name: \"a\" fwd_ms: 1 bwd_ms: 2 }\nlayers { name: \"b\" fwd_ms: 3 bwd_ms: 4 }");
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.layers[0].name, "a");
  EXPECT_EQ(m.layers[1].name, "b");
}

TEST(ResolveModel, ExactlyOneSourceOfLayers) {
  EXPECT_EQ(error(""), "m.textproto:1: model: no model: give layers, pipedream_profile or zoo");
  EXPECT_EQ(error("pipedream_profile: \"p.txt\" zoo { name: \"gpt\" }"),
            "m.textproto:1: model: give exactly one of layers, pipedream_profile, zoo (or a zoo "
            "with its measured layers)");
  EXPECT_EQ(error("layers { fwd_ms: 1 bwd_ms: 2 }\nlayers { fwd_ms: 1 }"),
            "m.textproto:3: model.layers[1].bwd_ms: missing (give bwd_ms, bwd_fixed_ms/"
            "bwd_per_sample_ms, or cost_points)");
  EXPECT_EQ(error("layer_batch: 0 layers { fwd_ms: 1 bwd_ms: 2 }"),
            "m.textproto:2: model.layer_batch: must be positive (got 0)");
}

TEST(ResolveModel, AZooModelsMeasuredLayersMatchItsArchitecture) {
  // An MLP of 3 linear layers: measured costs come one per layer.
  const std::string mlp =
      "zoo { name: \"mlp\" layers: 3 hidden: 8 input_dim: 4 output_dim: 2 efficiency: 0.5 }";
  EXPECT_EQ(resolve(mlp).layers.size(), 3u);
  EXPECT_EQ(error(mlp + "\nlayers { fwd_ms: 1 bwd_ms: 2 }"),
            "m.textproto:3: model.layers: has 1 layers but the zoo model has 3");
}

}  // namespace
}  // namespace pipetwin
