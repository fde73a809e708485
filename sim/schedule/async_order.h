// Asynchronous pipelines (PipeDream, PipeDream-2BW, APapo): each device's compute order
// over the whole run, not one iteration, since no flush separates iterations. The order
// comes from list scheduling on the stage costs (whatever can start first, a backward on
// a tie; a forward only while the stage has room), so it is one a runtime would follow,
// and it can never deadlock.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/schedule/compute_order.h"

namespace pipetwin {

struct RunAction {
  int32_t iteration = 0;
  ComputeAction action;  // kFwd, kBwd, or kOptim (an update of action.stage)
  bool operator==(const RunAction&) const = default;
};
// Per device (stage s on device s; with replicated stages, stage-major: stage 0's
// replicas first), in execution order, over all iterations.
using RunOrder = std::vector<std::vector<RunAction>>;

struct AsyncOrderInput {
  int32_t stages = 1;
  int32_t microbatches = 1;  // per iteration
  int32_t iterations = 1;
  std::vector<double> forward_s, backward_s, update_s;  // per stage, one microbatch
  // Per cut (stage s to s + 1): one microbatch's activations (or gradients) in transit.
  std::vector<double> transfer_s;
  // PipeDream: every microbatch is a minibatch with its own update (after each backward);
  // otherwise one update per iteration, after the stage's last backward of it.
  bool update_every_microbatch = false;
  // APapo's micro-batch control, at stage 0: a microbatch j of iteration t + 1 with
  // j >= max_staleness waits for iteration t's update; iteration t + n waits for
  // iteration t's update (n = max_in_flight_iterations). Negative: no bound.
  int32_t max_staleness = -1;
  int32_t max_in_flight_iterations = -1;
  // PipeDream's replicated stages, per stage (empty: one device each). Microbatch j of the
  // run (j = t M + m) runs on replica j mod r_s, so that the replicas share the stream
  // evenly whatever M is. The replicas of a stage update together: each update waits for
  // the backwards of every replica it covers (PipeDream: the round of r_s consecutive
  // microbatches; otherwise the iteration), then for their all-reduce (allreduce_s, per
  // stage), then takes update_s.
  std::vector<int32_t> replicas;
  std::vector<double> allreduce_s;
};

// At most K - s microbatches in flight on stage s (1F1B's bound, what weight stashing
// keeps versions for). Replicated stages: per replica, enough to keep it busy through a
// microbatch's round trip (PipeDream's NOAM with equal stages and free transfers, more
// with slow cuts; async_order.cpp), and each replica goes on computing while its update's
// all-reduce runs, applying the update before its next backward.
RunOrder async_run_order(const AsyncOrderInput& input);

}  // namespace pipetwin
