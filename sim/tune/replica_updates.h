// The end of one replica's iteration for the fast evaluator: after its passes (timed by
// pipeline_timing.h), each device reduces its chunks' gradients on its data-parallel lane, in
// buckets under each chunk's last backward (DualPipe's two copies of a stage together; ZeRO's
// reduce-scatters), in the order the Program places them, then steps its optimizer for each
// chunk (ZeRO 1 and 2 then gather the updated weights).
#pragma once

#include "sim/schedule/lowering.h"
#include "sim/spec/resolved_scenario.h"
#include "sim/tune/gpu_numbering.h"
#include "sim/tune/pipeline_timing.h"

namespace pipetwin {

// When the last device's last update (and its gathers) ends.
double replica_updates_end(const ResolvedScenario& setup, const PipelineLayout& layout,
                           const GpuNumbering& gpus, const PipelinePasses& passes,
                           const PipelineTiming& timing);

}  // namespace pipetwin
