// What-if analysis against the published one: the `ST` job of ByteDance's straggler study
// (tests/data/straggler-analysis/) replays to its measured step, and its slowdown and the
// attribution by stage, data-parallel rank and op type are the paper's (result-ST.json).
#include "analysis/whatif.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "analysis/megatron_op_graph.h"
#include "analysis/op_trace.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

const std::string kDir = std::string(PIPETWIN_SOURCE_DIR) + "/tests/data/straggler-analysis/";

OpTrace st_trace() {
  return read_megatron_op_trace(kDir + "timeline-ST.json.gz", kDir + "meta-ST.yaml");
}

nlohmann::json published() {
  std::ifstream in(kDir + "result-ST.json");
  return nlohmann::json::parse(in);
}

TEST(WhatIf, TheStTraceReadsAsDp2Pp4Over32Steps) {
  const OpTrace trace = st_trace();
  EXPECT_EQ(trace.meta.dp_size, 2);
  EXPECT_EQ(trace.meta.pp_size, 4);
  EXPECT_EQ(trace.ops.size(), 6784u);  // every complete event
  const MeasuredJob job = megatron_job(trace);
  EXPECT_EQ(job.instances.steps.size(), 32u);
}

// The dependency model explains the measured run: replayed with every op's measured time and
// launch delay, each step ends when it ended.
TEST(WhatIf, TheReplayReproducesTheMeasuredStep) {
  const WhatIfResult r = what_if(st_trace());
  EXPECT_NEAR(r.replayed_step_s / r.measured_step_s, 1, 0.01);
  // The paper's step times without delays and without stragglers (ms-ST.json's tori, tideal).
  EXPECT_NEAR(r.no_delay_step_s, 2.172696813310722, 1e-3);
  EXPECT_NEAR(r.ideal_step_s, 1.843295824372035, 1e-3);
}

TEST(WhatIf, TheSlowdownAndItsAttributionAreThePapers) {
  const WhatIfResult r = what_if(st_trace());
  const nlohmann::json paper = published();
  EXPECT_NEAR(r.slowdown / paper["blocking_slowdown"].get<double>(), 1, 0.02);
  for (const auto& [stage, slowdown] : paper["blocking_decompose_by_stage"].items()) {
    EXPECT_NEAR(r.by_stage.at(std::stoi(stage)), slowdown.get<double>(), 0.01) << stage;
  }
  // The long last stage is the one to blame.
  const auto worst = std::max_element(r.by_stage.begin(), r.by_stage.end(),
                                      [](auto& a, auto& b) { return a.second < b.second; });
  EXPECT_EQ(worst->first, 3);
  for (const auto& [rank, slowdown] : paper["blocking_decompose_by_dp_rank"].items()) {
    EXPECT_NEAR(r.by_dp_rank.at(std::stoi(rank)), slowdown.get<double>(), 0.01) << rank;
  }
  for (const auto& [op, slowdown] : paper["blocking_decompose_by_optype"].items()) {
    EXPECT_NEAR(r.by_op.at(op), slowdown.get<double>(), 0.01) << op;
  }
  for (const auto& [step, slowdown] : paper["blocking_step_slowdown"].items()) {
    EXPECT_NEAR(r.step_slowdown.at(std::stoi(step)), slowdown.get<double>(), 0.01) << step;
  }
}

}  // namespace
}  // namespace pipetwin
