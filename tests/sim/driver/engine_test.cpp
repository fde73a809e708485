// The engine seam: names parse to engines and back, an unknown name lists the known ones,
// and execute() runs the engine it is given (exact SimGrid equals the analytic engine).
#include "sim/driver/engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/spec/errors.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

TEST(Engine, NamesRoundTrip) {
  for (const std::string& name : available_engines()) {
    EXPECT_EQ(engine_name(parse_engine(name)), name);
  }
  EXPECT_EQ(parse_engine("analytic"), Engine::kAnalytic);
  EXPECT_EQ(parse_engine("simgrid"), Engine::kSimgrid);
}

TEST(Engine, AnUnknownNameListsTheKnownOnes) {
  EXPECT_THAT([] { parse_engine("ns3"); },
              ::testing::ThrowsMessage<InputError>(
                  HasSubstr("--engine ns3: unknown engine (available: analytic, simgrid)")));
}

TEST(Engine, ExecuteRunsTheEngineItIsGiven) {
  ResolvedScenario setup = testing::uniform_setup(proto::ONE_F_ONE_B, 3, 6, 1e-3, 2e-3);
  setup.simgrid.exact = true;
  const Program program = build_program(setup);
  testing::expect_same_times(program, execute(program, setup, Engine::kAnalytic),
                             execute(program, setup, Engine::kSimgrid));
}

TEST(Engine, TheAnalyticEngineAccountsOnTheClusterFabric) {
  const ResolvedScenario setup = testing::uniform_setup(proto::GPIPE, 2, 2, 1e-3, 2e-3);
  const Program program = build_program(setup);
  EXPECT_TRUE(accounting_topology(program, setup, Engine::kAnalytic).has_value());
  ResolvedScenario own_platform = setup;
  own_platform.cluster.simgrid_platform = "racks.xml";
  EXPECT_FALSE(accounting_topology(program, own_platform, Engine::kSimgrid).has_value());
}

}  // namespace
}  // namespace pipetwin
