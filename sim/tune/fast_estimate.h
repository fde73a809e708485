// `pipetwin tune`'s fast evaluator: a configuration's iteration time and peak GPU memory
// without building its Program. One pipeline replica stands for all (every replica, every
// tensor- and context-parallel GPU of a stage runs the same passes): each pass's time is its
// compute plus the collectives it waits for (tensor parallelism's all-reduces, expert
// all-to-alls, context parallelism's key/value exchange beyond what its attention hides),
// priced by the network model (sim/network/) on the GPUs that hold them, and ZeRO's scatters
// and gathers on the data-parallel lane; the compute order is the schedule's own
// (sim/schedule/), timed in max-plus algebra (pipeline_timing.h); each device then reduces its
// gradients in buckets under its last backward and steps its optimizer. Memory is the
// layout's resident bytes plus the most stash and receive buffer the timed order holds.
//
// What it leaves out, the analytic engine has: a transfer holding its sender's send lane and
// its receiver's recv lane (a rendezvous; DualPipe posts its receives in the order their data
// is produced), ZB_AUTO's choice among its candidates by the engine, offload's copies.
// docs/tune.md states the difference measured on the shipped scenarios.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

struct FastEstimate {
  double iteration_time_s = 0;
  int64_t peak_memory_bytes = 0;  // the most any GPU holds
};

// Whether estimate_fast models the scenario's schedule: the synchronous pipelines with equal
// microbatches (GPipe, 1F1B, interleaved, ZB-H1, ZB-H2, ZB-V, ZB_AUTO, DualPipe), one device
// per stage, FSDP's defaults (no hybrid sharding, weights resharded after each pass), every
// device at the cluster GPU's speed (no cluster.overrides or node groups of other GPUs).
bool has_fast_estimate(const ResolvedScenario& setup);

// One iteration of a resolved scenario; nullopt where has_fast_estimate is false.
std::optional<FastEstimate> estimate_fast(const ResolvedScenario& setup);

}  // namespace pipetwin
