#include "sim/tune/fast_estimate.h"

#include <algorithm>

#include "sim/driver/build_program.h"
#include "sim/driver/pipeline_pass_costs.h"
#include "sim/schedule/compute_order.h"
#include "sim/schedule/dualpipe_order.h"
#include "sim/schedule/zero_bubble_auto.h"
#include "sim/schedule/zero_bubble_order.h"
#include "sim/tune/pipeline_timing.h"
#include "sim/tune/replica_passes.h"
#include "sim/tune/replica_updates.h"

namespace pipetwin {
namespace {

ComputeOrder order_of(const ResolvedScenario& setup, const PipelineLayout& layout) {
  const int32_t K = setup.schedule.stages, M = setup.training.microbatches;
  switch (setup.schedule.kind) {
    case proto::GPIPE:
      return gpipe_order(K, M);
    case proto::ONE_F_ONE_B:
      return one_f_one_b_order(K, M);
    case proto::INTERLEAVED_ONE_F_ONE_B:
      return interleaved_order(K, setup.schedule.virtual_stages, M);
    case proto::ZB_H1:
      return zb_h1_order(K, M);
    case proto::ZB_H2:
      return zb_h2_order(K, M);
    case proto::ZB_V:
      return zb_v_schedule(K, M, chunk_pass_costs(layout)).order;
    case proto::ZB_AUTO: {
      const double limit = setup.schedule.memory_limit_microbatches;
      return zb_auto_fastest_order(M, linear_pipeline_costs(setup, layout), limit > 0 ? limit : K);
    }
    case proto::DUALPIPE:
      return dualpipe_order(K, M);
    default:
      return {};
  }
}

}  // namespace

bool has_fast_estimate(const ResolvedScenario& setup) {
  // Hybrid sharding and weights kept whole past their pass are the engines' alone.
  if (setup.training.fsdp_shard_size != 0 ||
      setup.training.fsdp_reshard != proto::Training::AFTER_EACH_PASS) {
    return false;
  }
  // One replica stands for all: not when some device computes or talks at another speed.
  if (!setup.cluster.as_built()) return false;
  switch (setup.schedule.kind) {
    case proto::GPIPE:
    case proto::ONE_F_ONE_B:
    case proto::INTERLEAVED_ONE_F_ONE_B:
    case proto::ZB_H1:
    case proto::ZB_H2:
    case proto::ZB_V:
    case proto::ZB_AUTO:
    case proto::DUALPIPE:
      return setup.schedule.stage_replicas.empty();
    default:
      return false;
  }
}

std::optional<FastEstimate> estimate_fast(const ResolvedScenario& setup) {
  if (!has_fast_estimate(setup)) return std::nullopt;
  const PipelineLayout layout = make_layout(setup, place_layers(setup));
  const GpuNumbering gpus{setup.training.tensor_parallel, setup.training.context_parallel,
                          layout.devices_per_replica};
  const PipelinePasses passes = replica_passes(setup, layout, gpus);
  const PipelineTiming timing =
      time_pipeline(order_of(setup, layout), setup.training.microbatches, passes);
  const double makespan = replica_updates_end(setup, layout, gpus, passes, timing);

  FastEstimate estimate;
  estimate.iteration_time_s = makespan;
  for (int32_t d = 0; d < layout.devices_per_replica; ++d) {
    int64_t resident = 0;
    for (int32_t r = 0; r < layout.replicas; ++r) {
      resident = std::max(resident, layout.static_bytes[d + r * layout.devices_per_replica]);
    }
    estimate.peak_memory_bytes =
        std::max(estimate.peak_memory_bytes, resident + timing.peak_activation_bytes[d]);
  }
  return estimate;
}

}  // namespace pipetwin
