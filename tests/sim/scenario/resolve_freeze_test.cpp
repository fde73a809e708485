// The freeze section alone: one source of freezing, fixed points that move forward, and the
// bounds of the rule and of synthetic gradients.
#include "sim/scenario/resolve_freeze.h"

#include <gtest/gtest.h>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

constexpr int32_t kLayers = 6;
constexpr int32_t kIterations = 100;

FreezeSpec resolve(const std::string& freeze) {
  const LoadedScenario loaded =
      parse_scenario("freeze {\n" + freeze + "\n}", "f.textproto", ".", false, {});
  return resolve_freeze(ScenarioChecker(loaded), loaded, kLayers, kIterations);
}

std::string error(const std::string& freeze) {
  try {
    resolve(freeze);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ResolveFreeze, FixedPointsAndTheRule) {
  const LoadedScenario none = parse_scenario("", "f.textproto", ".", false, {});
  EXPECT_FALSE(resolve_freeze(ScenarioChecker(none), none, kLayers, kIterations).enabled);
  const FreezeSpec spec = resolve(
      "interval_iterations: 5 percentile: 40\n"
      "at { iteration: 10 frozen_layers: 2 } at { iteration: 20 frozen_layers: 4 }");
  EXPECT_TRUE(spec.enabled);
  EXPECT_EQ(spec.interval_iterations, 5);
  ASSERT_EQ(spec.at.size(), 2u);
  EXPECT_EQ(spec.at[1].first, 20);
  EXPECT_EQ(spec.at[1].second, 4);
  EXPECT_FALSE(spec.synthetic.has_value());
}

TEST(ResolveFreeze, ErrorsNameTheField) {
  EXPECT_EQ(error("at { iteration: 20 frozen_layers: 2 }\nat { iteration: 10 frozen_layers: 3 }"),
            "f.textproto:3: freeze.at[1].iteration: must increase and lie in (0, "
            "training.iterations = 100)");
  EXPECT_EQ(error("at { iteration: 10 frozen_layers: 6 }"),
            "f.textproto:2: freeze.at[0].frozen_layers: must not decrease and must leave a layer "
            "to train (the model has 6)");
  EXPECT_EQ(error("at { iteration: 10 frozen_layers: 2 }\nsynthetic { }"),
            "f.textproto:1: freeze: give at most one of at, log, synthetic");
  EXPECT_EQ(error("percentile: 101"),
            "f.textproto:2: freeze.percentile: must be in [0, 100] (got 101)");
  EXPECT_EQ(error("synthetic { floor: 1 }"),
            "f.textproto:2: freeze.synthetic.floor: must be in [0, 1) (got 1)");
}

}  // namespace
}  // namespace pipetwin
