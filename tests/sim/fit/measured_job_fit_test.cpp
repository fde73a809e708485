// Calibrating from another framework's job: the `ST` trace of ByteDance's straggler study
// (tests/data/straggler-analysis/, a Megatron-LM run that counts microbatches, not samples)
// takes its scenario's sample ranges, fits the scenario, and the fitted scenario simulates the
// measured run. The ranges themselves are checked against the simulator's own.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "analysis/op_trace.h"
#include "analysis/op_trace_timeline.h"
#include "analysis/statistics.h"
#include "sim/fit/makespan_match.h"
#include "sim/fit/measured_ranges.h"
#include "sim/fit/trace_fit.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/driver/simulate.h"

namespace pipetwin {
namespace {

const std::string kDir = std::string(PIPETWIN_SOURCE_DIR) + "/tests/data/straggler-analysis/";

Timeline st_timeline() {
  return timeline_from_op_trace(
      read_megatron_op_trace(kDir + "timeline-ST.json.gz", kDir + "meta-ST.yaml"));
}

// The simulator's own timeline with every range erased gets every range back.
TEST(MeasuredRanges, ASimulatedRunWithoutSamplesGetsItsOwnRangesBack) {
  const LoadedScenario loaded = load_scenario(
      kDir + "scenario-ST.textproto", {"training.iterations=2", "training.global_batch=16"});
  const SimulationResult run = simulate(loaded, {});
  Timeline erased = run.timeline;
  int32_t rangeable = 0;
  for (Span& span : erased.spans) {
    span.range_lo = span.range_hi = 0;
    if (span.op == "FWD" || span.op == "BWD" || span.op.rfind("SEND", 0) == 0 ||
        span.op.rfind("RECV", 0) == 0 || span.op == "REDUCE_SCATTER" || span.op == "ALL_GATHER" ||
        span.op == "ALLREDUCE" || span.op == "OPTIM") {
      ++rangeable;
    }
  }
  EXPECT_EQ(assign_sample_ranges(run.setup, erased), rangeable);
  for (size_t k = 0; k < erased.spans.size(); ++k) {
    EXPECT_EQ(erased.spans[k].range_lo, run.timeline.spans[k].range_lo)
        << run.timeline.spans[k].name;
    EXPECT_EQ(erased.spans[k].range_hi, run.timeline.spans[k].range_hi)
        << run.timeline.spans[k].name;
  }
}

// Megatron's mb_id counts within a data-parallel rank, and its pipeline transfers carry none:
// the import numbers microbatches across replicas, transfers by their order.
TEST(MeasuredRanges, TheStTraceNamesEveryPassAndTransferByItsMicrobatch) {
  const Timeline timeline = st_timeline();
  std::map<std::string, std::pair<int32_t, int32_t>> range;  // op -> min, max microbatch
  for (const Span& span : timeline.spans) {
    if (span.op != "FWD" && span.op != "BWD" && span.op != "SEND_ACT" && span.op != "RECV_GRAD") {
      continue;
    }
    auto [it, added] = range.try_emplace(span.op, span.microbatch, span.microbatch);
    it->second.first = std::min(it->second.first, span.microbatch);
    it->second.second = std::max(it->second.second, span.microbatch);
    const int32_t replica = span.device / 4;
    EXPECT_EQ(span.microbatch / 4, replica) << span.name;
  }
  for (const auto& [op, seen] : range) {
    EXPECT_EQ(seen.first, 0) << op;
    EXPECT_EQ(seen.second, 7) << op;
  }
}

TEST(MeasuredJobFit, TheStJobCalibratesItsScenario) {
  const Timeline measured = st_timeline();
  const LoadedScenario loaded = load_scenario(kDir + "scenario-ST.textproto", {});
  const ResolvedScenario prior = resolve_scenario(loaded);
  const TraceFit fit = fit_trace(prior, measured, "timeline-ST.json.gz");
  // Megatron's blocking transfers run between passes: no compute slowdown can be seen.
  EXPECT_LT(fit.compute_overlap_share, 0.01);
  EXPECT_EQ(fit.interference.compute_slowdown, 0);
  // The last stage computes the logits too: its forward takes about twice the others'.
  const double first = fit.compute[0].scale, last = fit.compute[6].scale;
  EXPECT_GT(last / first, 1.6);

  proto::Scenario fitted = fitted_scenario(loaded.scenario, prior, fit);
  const MakespanMatch match = match_makespan(fitted, loaded.base_dir, fit.measured_makespan_s);
  // The fitted costs and mean gaps alone come within 10%; the wake-up gap matches the rest.
  EXPECT_NEAR(match.simulated_before_s / fit.measured_makespan_s, 1, 0.10);
  EXPECT_NEAR(match.simulated_after_s / fit.measured_makespan_s, 1, 1e-3);

  // Every pass of the simulation lasts what the measured ones did, per stage and direction.
  LoadedScenario again = load_scenario(kDir + "scenario-ST.textproto", {});
  again.scenario = fitted;
  const SimulationResult run = simulate(again, {});
  std::map<std::pair<std::string, int32_t>, std::vector<double>> simulated, observed;
  for (const Span& s : run.timeline.spans) simulated[{s.op, s.stage}].push_back(s.duration_s());
  for (const Span& s : measured.spans) observed[{s.op, s.stage}].push_back(s.duration_s());
  for (const std::string op : {"FWD", "BWD", "OPTIM"}) {
    for (int32_t stage = 0; stage < 4; ++stage) {
      const double want = median(observed[{op, stage}]);
      EXPECT_NEAR(median(simulated[{op, stage}]) / want, 1, 0.05) << op << " stage " << stage;
    }
  }
}

}  // namespace
}  // namespace pipetwin
