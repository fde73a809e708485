// The reductions of a stage's gradients that data parallelism runs: over the GPUs holding the
// same weights (every replica's, with context parallelism's C GPUs of each, and DualPipe's two
// copies), and, with expert parallelism, the routed experts' gradients over the replicas
// holding the same experts. Sharded data parallelism (ZeRO) scatters and gathers over the same
// groups.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/schedule/lowering.h"
#include "sim/spec/resolved_scenario.h"
#include "sim/tune/gpu_numbering.h"

namespace pipetwin {

// One reduction of a stage's gradients over the GPUs holding the same weights.
struct Reduction {
  std::vector<int32_t> group;
  int64_t bytes = 0;
};

// `devices`: those holding the stage's weights in one replica (DualPipe's two copies).
std::vector<Reduction> reductions_of(const ResolvedScenario& setup, const StageCost& cost,
                                     const GpuNumbering& gpus, const std::vector<int32_t>& devices);

}  // namespace pipetwin
