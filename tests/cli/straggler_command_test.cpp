// `pipetwin straggler` against the closed form of a GPipe pipeline with one slow stage, on both
// engines: every position gives (K - 1)(f + b) + M (f + b) / s over (M + K - 1)(f + b), and the
// op kinds' time grows by the slow device's share.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using testing::run_pipetwin;
using testing::TempDir;

constexpr char kFourStages[] = R"pb(
  cluster {
    nodes: 1
    gpus_per_node: 4
    gpu { peak_tflops: 100 memory_gib: 80 }
    intra_node { bandwidth_gbytes_per_s: 100 latency_us: 0 }
  }
  model {
    layers { fwd_ms: 1 bwd_ms: 2 }
    layers { fwd_ms: 1 bwd_ms: 2 }
    layers { fwd_ms: 1 bwd_ms: 2 }
    layers { fwd_ms: 1 bwd_ms: 2 }
  }
  training { global_batch: 8 microbatches: 8 }
  schedule { kind: GPIPE stages: 4 }
)pb";

class StragglerCli : public ::testing::TestWithParam<const char*> {
 protected:
  std::string scenario() {
    const std::string path = (dir_.path() / "four.textproto").string();
    std::ofstream(path) << kFourStages;
    return path;
  }
  TempDir dir_;
};

TEST_P(StragglerCli, EveryPositionSlowsTheStepByTheClosedForm) {
  const CliResult r = run_pipetwin("straggler " + scenario() + " --factor 0.5,0.8 --engine " +
                                   GetParam() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const double f = 1e-3, b = 2e-3;
  const int K = 4, M = 8;
  EXPECT_NEAR(j["step_s"].get<double>(), (M + K - 1) * (f + b), 1e-9);
  ASSERT_EQ(j["points"].size(), 8u);
  for (const auto& [factor, stages] : j["by_stage"].items()) {
    const double s = std::stod(factor);
    const double expected = ((K - 1) + M / s) / (M + K - 1);
    ASSERT_EQ(stages.size(), 4u);
    for (const auto& [stage, slowdown] : stages.items()) {
      EXPECT_NEAR(slowdown.get<double>(), expected, 1e-9) << "s=" << s << " stage " << stage;
    }
  }
  // The worst point is a device at 0.5: its forwards and backwards take twice as long.
  EXPECT_NEAR(j["by_op"]["FWD"].get<double>(), (K - 1 + 2.0) / K, 1e-9);
  EXPECT_NEAR(j["by_op"]["BWD"].get<double>(), (K - 1 + 2.0) / K, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(BothEngines, StragglerCli, ::testing::Values("analytic", "simgrid"));

TEST(StragglerCliErrors, RefusesBadFactorsAndDevices) {
  for (const auto& [args, field] :
       {std::pair{"--factor 0", "--factor"}, std::pair{"--factor 1.5", "--factor"},
        std::pair{"--factor 0.5 --devices 9-3", "--devices"},
        std::pair{"--factor 0.5 --devices 999", "--devices"}}) {
    const CliResult r = run_pipetwin(std::string("straggler builtin:gpt-8gpu-1f1b ") + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(field), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace pipetwin
