// The analytic executor: list scheduling in max-plus algebra (docs/schedules.md, "The analytic
// executor"). end(i) = max(end(lane predecessor), end(dependencies), partner's readiness) +
// duration(i) Compute takes its instruction's compute_s; a transfer takes latency + bytes /
// bandwidth of the link between its two devices; an ALLREDUCE the ring's closed form
// (sim/network/network_model.h). Exact and contention-free.
#pragma once

#include "sim/exec/execution_times.h"
#include "sim/program/program.h"
#include "sim/spec/cluster_spec.h"

namespace pipetwin {

// Throws RuntimeFailure if the program deadlocks (validation rules that out first).
ExecutionTimes run_analytic(const Program& program, const ClusterSpec& cluster);

}  // namespace pipetwin
