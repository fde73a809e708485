// The fast evaluator of UMPIPE plans (TiDGAP's role in the paper): the iteration time of a
// plan without building a Program, exactly equal (bit for bit) to what the analytic
// executor computes for the lowered UMPIPE program, so that a genetic search can score
// thousands of plans per generation. It pays every per-op fixed cost the scenario has: the
// layers' launch overheads (in their cost curves), each message's latency, and the
// host-side dispatch gaps between ops (cluster.dispatch), so that the search itself prefers
// plans that pay them where they are worth it. Interference it leaves out.
//
// For the UMPIPE order (each stage runs all its forwards, then all its backwards) the
// program's max-plus recurrence reduces to a few chains per stage boundary, with I the issue
// gap after a lane's previous op and W the wake-up gap after another lane's op:
//   forward pieces   T_p = max(T_{p-1} + I, F_{s-1}[k(p)] + W) + c_{s-1}(|p|)
//   forward compute  F_s[j] = max(F_s[j-1] + I, T_{last piece of j} + W) + f_s(b_sj)
//   gradient pieces  G_p = max(G_{p-1} + I, B_{s+1}[k(p)] + W) + c_s(|p|)   (G_{-1}: the
//                    lanes' last forward transfers)
//   backward compute B_s[j] = max(B_s[j-1] + I, G_{last piece of j} + W) + g_s(beta_sj)
// where a piece is the overlap of a producer's and a consumer's microbatch, and a lane's
// first op has no issue gap. Costs come from per-stage tables indexed by microbatch size,
// filled from the same cost curves the
// Program uses; the loops touch only plain arrays, and a population is spread over
// threads.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/spec/cluster_spec.h"
#include "sim/spec/resolved_scenario.h"
#include "sim/spec/unequal_plan.h"

namespace pipetwin {

class PlanEvaluator {
 public:
  // One pipeline (data_parallel 1, one virtual stage), one iteration, the scenario's
  // layer placement and cluster.
  explicit PlanEvaluator(const ResolvedScenario& setup);

  int32_t stages() const { return stages_; }
  int32_t global_batch() const { return batch_; }

  // Seconds of one iteration. The plan must be valid (plan_problem() empty).
  double iteration_time(const UnequalPlan& plan) const;

  // A whole population on `threads` workers (0: hardware concurrency).
  void evaluate(std::span<const UnequalPlan> population, std::span<double> seconds,
                int threads = 0) const;

  // Stage s's forward + backward time per sample at microbatch size b (local greedy).
  double stage_seconds_per_sample(int32_t stage, int32_t b) const;

 private:
  // Row s of a [stage][size] table, sizes 0 .. batch.
  const double* row(const std::vector<double>& table, int32_t s) const {
    return table.data() + static_cast<size_t>(s) * (batch_ + 1);
  }

  int32_t stages_ = 0;
  int32_t batch_ = 0;
  std::vector<double> fwd_;       // compute time of a forward of b samples on stage s
  std::vector<double> bwd_;       // ... of a backward
  std::vector<double> transfer_;  // a piece of b samples over the cut after stage s
  std::vector<double> optim_;     // each stage's update
  DispatchSpec gaps_;             // host-side gaps between ops (cluster.dispatch)
};

}  // namespace pipetwin
