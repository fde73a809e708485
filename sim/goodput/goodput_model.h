// Expected goodput of a training run that fails and restarts from checkpoints, in closed form.
// The run is `steps` steps of `step_s` each, cut into segments of `interval_steps` steps (the
// last may be shorter); after every segment but the last a checkpoint stops training for
// `checkpoint_block_s`. Failures arrive as a Poisson process of rate lambda during work and
// checkpoints, not during restarts. A failure throws away the segment's progress (and the
// checkpoint being written) and costs R, the restart (detection, rescheduling, loading the
// checkpoint, warm-up), after which the segment starts again. A segment of length L (work plus
// its checkpoint) then takes (1/lambda + R)(e^{lambda L} - 1) on average and sees
// e^{lambda L} - 1 failures. An asynchronous checkpoint is durable only `checkpoint_persist_s`
// after its snapshot; a failure inside that window loses the previous segment too, which to
// first order costs `checkpoint_persist_s` more per failure, so R = restart_s +
// checkpoint_persist_s: an approximation, exact only for synchronous checkpoints (persist 0).
#pragma once

#include <cstdint>

#include "sim/goodput/lambert_w.h"

namespace pipetwin {

struct RunPlan {
  int64_t steps = 0;
  double step_s = 0;
  double failures_per_s = 0;
  double checkpoint_block_s = 0;    // training stopped per checkpoint
  double checkpoint_persist_s = 0;  // asynchronous: after the snapshot until durable; 0 sync
  double restart_s = 0;
};

// Expected values; expected_s = compute_s + checkpoint_s + restart_s + lost_work_s.
struct GoodputEstimate {
  int64_t interval_steps = 0;
  int64_t checkpoints = 0;  // written during the run (segments - 1)
  double expected_s = 0;    // wall clock
  double compute_s = 0;     // steps * step_s
  double checkpoint_s = 0;  // checkpoints * checkpoint_block_s, the checkpoints that completed
  double restart_s = 0;     // failures * (restart_s + checkpoint_persist_s)
  double lost_work_s = 0;   // work and checkpoint writing that failures threw away, >= 0
  double failures = 0;      // expected number
  double ettr = 1;          // effective training time ratio, compute_s / expected_s
};

// The run checkpointed every `interval_steps` steps, clamped to [1, steps] (`steps`: no
// checkpoint at all). A plan of no steps takes no time.
GoodputEstimate expected_goodput(const RunPlan& plan, int64_t interval_steps);

// The interval (work seconds between checkpoints) minimising the expected time per unit of
// work of an infinitely long run: tau = (1 + W0(-exp(-lambda C - 1))) / lambda, the exact
// optimum of (e^{lambda (tau + C)} - 1) / tau (R only scales it); Young's sqrt(2 C M) and
// Daly's expansion approximate it. +infinity when lambda = 0, 0 when C = 0.
double optimal_interval_s(double failures_per_s, double checkpoint_block_s);

// Young's first-order interval, sqrt(2 C / lambda); +infinity when lambda = 0.
double young_interval_s(double failures_per_s, double checkpoint_block_s);

// The optimum in whole steps: the interval, at least 1 and at most `steps` (no checkpoint at
// all), that minimises expected_goodput's expected_s, found exactly (ties to the longer
// interval). A finite run's best is not always the whole step nearest optimal_interval_s: its
// last segment writes no checkpoint, so intervals that cut the run evenly can win.
int64_t optimal_interval_steps(const RunPlan& plan);

}  // namespace pipetwin
