// SELECTIVE offload: offload a stage's activations only where that lowers its device's
// peak memory without slowing the iteration. PipeOffload (Wan et al. 2025) reports that
// most activations can be offloaded for free this way; here the analytic executor judges
// each stage, greedily, from the stage with the most activation memory down.
#pragma once

#include <vector>

#include "sim/schedule/compute_order.h"
#include "sim/schedule/lowering.h"
#include "sim/spec/cluster_spec.h"

namespace pipetwin {

// `layout.offload_fraction` holds the candidate stages (fraction > 0); returns it with
// the stages that do not pay off set to 0. Judged on one iteration.
std::vector<double> select_offloaded_stages(const PipelineLayout& layout, const ComputeOrder& order,
                                            const ClusterSpec& cluster);

}  // namespace pipetwin
