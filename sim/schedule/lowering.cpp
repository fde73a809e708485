#include "sim/schedule/lowering.h"

#include "sim/schedule/lowering_compute.h"
#include "sim/schedule/lowering_context.h"
#include "sim/schedule/lowering_offload.h"
#include "sim/schedule/lowering_transfers.h"
#include "sim/schedule/lowering_updates.h"

namespace pipetwin {
namespace {

// Whether some stage cuts the minibatch unevenly or differently from another.
bool ranges_differ(const PipelineLayout& layout) {
  const auto& reference = layout.fwd_ranges.front();
  for (size_t s = 0; s < layout.fwd_ranges.size(); ++s) {
    if (layout.fwd_ranges[s] != reference || layout.bwd_ranges[s] != reference) return true;
  }
  const int32_t first = reference.front().size();
  for (const SampleRange& r : reference) {
    if (r.size() != first) return true;
  }
  return false;
}

ProgramBuilder new_builder(const LoweringContext& context, int32_t iterations) {
  const PipelineLayout& layout = context.layout();
  return ProgramBuilder(layout.num_devices, context.num_stages(), iterations, layout.global_batch);
}

Program finish(const LoweringContext& context, ProgramBuilder builder) {
  const PipelineLayout& layout = context.layout();
  builder.set_static_bytes(layout.static_bytes);
  builder.set_stage_device(layout.stage_device);
  if (context.stage_replicas().replicated()) builder.set_stage_replicas(layout.stage_replicas);
  builder.set_model_stage(layout.model_stage);
  builder.set_show_ranges(ranges_differ(layout));
  return std::move(builder).finish();
}

}  // namespace

std::vector<int32_t> stage_devices(const PipelineLayout& layout, int32_t stage) {
  const int32_t replicas = layout.stage_replicas.empty() ? 1 : layout.stage_replicas[stage];
  std::vector<int32_t> devices;
  for (int32_t r = 0; r < layout.replicas; ++r) {
    for (int32_t k = 0; k < replicas; ++k) {
      devices.push_back(layout.stage_device[stage] + r * layout.devices_per_replica + k);
    }
  }
  return devices;
}

// Each dependency row of the Program lists its edges in the order the passes add them:
// here transfers, then copies, then updates (lower_run below adds the updates first). The
// golden Programs of tests/sim/schedule/lowering_golden_test.cpp pin both orders.
Program lower(const PipelineLayout& layout, const ComputeOrder& order, int32_t iterations,
              const ProductionTimes& production_times) {
  const LoweringContext context(layout, /*run_wide=*/false);
  ProgramBuilder builder = new_builder(context, iterations);
  // Each compute action brings at most one SEND and one RECV with it on a straight
  // pipeline (more only where stages cut the batch differently), and about as many
  // dependencies as instructions.
  int64_t actions = 0;
  for (const auto& device_order : order) actions += static_cast<int64_t>(device_order.size());
  const int64_t per_iteration = layout.replicas * (3 * actions + 2 * context.num_stages());
  builder.reserve(per_iteration * iterations, 2 * per_iteration * iterations);
  const LoweredCompute compute = add_compute(context, order, iterations, builder);
  add_transfers(context, compute, builder, order, production_times);
  add_offload(context, compute, builder);
  add_updates(context, compute.updates, builder);
  return finish(context, std::move(builder));
}

Program lower_run(const PipelineLayout& layout, const RunOrder& run, int32_t iterations,
                  bool update_every_microbatch) {
  const LoweringContext context(layout, /*run_wide=*/true);
  ProgramBuilder builder = new_builder(context, iterations);
  const LoweredCompute compute =
      add_compute_run(context, run, iterations, update_every_microbatch, builder);
  add_updates(context, compute.updates, builder);
  add_offload(context, compute, builder);
  add_transfers(context, compute, builder);
  return finish(context, std::move(builder));
}

}  // namespace pipetwin
