#include "sim/driver/build_program.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/driver/pipeline_pass_costs.h"
#include "sim/driver/zero_bubble_auto_choice.h"
#include "sim/network/network_model.h"
#include "sim/partition/balanced_partition.h"
#include "sim/planner/selective_offload.h"
#include "sim/program/validate_program.h"
#include "sim/schedule/blocking_transfers.h"
#include "sim/schedule/compute_order.h"
#include "sim/schedule/context_parallel.h"
#include "sim/schedule/device_speeds.h"
#include "sim/schedule/dualpipe_order.h"
#include "sim/schedule/expert_all_to_all.h"
#include "sim/schedule/gradient_buckets.h"
#include "sim/schedule/pipefb_program.h"
#include "sim/schedule/reduce_after_flush.h"
#include "sim/schedule/sharded_data_parallel.h"
#include "sim/schedule/tensor_parallel.h"
#include "sim/schedule/weight_versions.h"
#include "sim/schedule/zero_bubble_auto.h"
#include "sim/schedule/zero_bubble_order.h"

namespace pipetwin {

double device_flops(const ResolvedScenario& setup, int device) {
  return setup.cluster.devices[device].peak_flops * setup.model.efficiency;
}

int32_t chunk_device(const ResolvedScenario& setup, int32_t chunk) {
  if (setup.schedule.kind == proto::ZB_V || setup.schedule.kind == proto::DUALPIPE) {
    return v_chunk_device(setup.schedule.stages, chunk);
  }
  if (!setup.schedule.stage_replicas.empty()) {
    return StageReplicas(setup.schedule.stage_replicas).first_device(chunk);
  }
  return chunk % setup.schedule.stages;
}

ExpertOverlap expert_overlap(const ResolvedScenario& setup) {
  if (setup.schedule.kind == proto::DUALPIPE) return ExpertOverlap::kNextOp;
  return setup.training.overlap_moe_expert_parallel_comm ? ExpertOverlap::kOtherDirection
                                                         : ExpertOverlap::kNone;
}

namespace {

// PipeDream updates after every microbatch; 2BW and APapo once per iteration, APapo under
// micro-batch control. Each stage keeps the weight versions its in-flight microbatches
// need: resident bytes grow by its weights for every version beyond the current one, unless
// the stage offloads its weight stashes.
Program asynchronous_program(const ResolvedScenario& setup, const PipelineLayout& layout) {
  const ScheduleSpec& schedule = setup.schedule;
  AsyncOrderInput input;
  input.stages = schedule.stages;
  input.microbatches = setup.training.microbatches;
  input.iterations = setup.training.iterations;
  for (const StageCost& cost : layout.costs) {
    const double samples = layout.fwd_ranges.front().front().size();
    input.forward_s.push_back(cost.fwd.seconds(samples));
    input.backward_s.push_back(cost.bwd.seconds(samples));
    input.update_s.push_back(cost.optim_s);
  }
  for (int32_t s = 0; s + 1 < schedule.stages; ++s) {
    const double bytes =
        layout.costs[s].output_bytes_per_sample * layout.fwd_ranges.front().front().size();
    input.transfer_s.push_back(device_transfer_seconds(setup.cluster, layout.stage_device[s],
                                                       layout.stage_device[s + 1], bytes));
  }
  // Replicated stages update together, after an all-reduce among their replicas (none
  // without gradients: lowering emits none either).
  input.replicas = layout.stage_replicas;
  if (!layout.stage_replicas.empty()) {
    for (int32_t s = 0; s < schedule.stages; ++s) {
      const int64_t bytes = layout.costs[s].gradient_bytes;
      input.allreduce_s.push_back(bytes > 0 ? collective_seconds(setup.cluster, kProgramAllReduce,
                                                                 stage_devices(layout, s), bytes)
                                            : -1);
    }
  }
  input.update_every_microbatch = schedule.kind == proto::PIPEDREAM_ASYNC;
  if (schedule.kind == proto::APAPO) {
    input.max_staleness = schedule.max_staleness;
    input.max_in_flight_iterations = schedule.max_in_flight_iterations;
  }
  Program program = lower_run(layout, async_run_order(input), setup.training.iterations,
                              input.update_every_microbatch);
  if (!schedule.comm_overlap) block_compute_on_transfers(program);
  const WeightVersions versions = weight_versions(program);
  for (int32_t s = 0; s < program.num_stages; ++s) {
    // Offloaded versions are held on the device only between their reload and last use,
    // which the memory curve follows from the copies.
    if (!layout.offload_weight_stashes.empty() && layout.offload_weight_stashes[s]) continue;
    for (int32_t d : stage_devices(layout, s)) {  // the most any of its replicas keeps
      program.static_bytes[d] +=
          static_cast<int64_t>(versions.alive[s] - 1) * layout.costs[s].weight_bytes;
    }
  }
  program = bucket_gradients(program, layout, setup.training.grad_bucket_bytes);
  if (setup.training.tensor_parallel > 1) {
    program = expand_tensor_parallel(program, layout, setup.training.tensor_parallel);
  }
  validate_program(program);
  return program;
}

}  // namespace

std::vector<ChunkPassCosts> chunk_pass_costs(const PipelineLayout& layout) {
  const double samples = layout.fwd_ranges.front().front().size();
  bool stashes = false;
  for (const StageCost& cost : layout.costs) stashes |= cost.stash_bytes_per_sample > 0;
  std::vector<ChunkPassCosts> costs;
  for (const StageCost& cost : layout.costs) {
    ChunkPassCosts c;
    c.fwd_s = cost.fwd.seconds(samples);
    c.bwd_input_s = cost.bwd_input.seconds(samples);
    c.bwd_weight_s = cost.bwd_weight.seconds(samples);
    c.stash = stashes ? cost.stash_bytes_per_sample * samples : 1.0;
    c.weight_stash = stashes ? cost.bwd_weight_stash_bytes_per_sample * samples : 1.0;
    costs.push_back(c);
  }
  return costs;
}

LinearPipelineCosts linear_pipeline_costs(const ResolvedScenario& setup,
                                          const PipelineLayout& layout) {
  LinearPipelineCosts costs;
  costs.stages = chunk_pass_costs(layout);
  const double samples = layout.fwd_ranges.front().front().size();
  for (size_t s = 0; s < layout.costs.size(); ++s) {
    costs.update_s.push_back(layout.costs[s].optim_s);
    if (s + 1 == layout.costs.size()) break;
    const double bytes = layout.costs[s].output_bytes_per_sample * samples;
    const int32_t from = layout.stage_device[s], to = layout.stage_device[s + 1];
    costs.forward_transfer_s.push_back(device_transfer_seconds(setup.cluster, from, to, bytes));
    costs.backward_transfer_s.push_back(device_transfer_seconds(setup.cluster, to, from, bytes));
  }
  return costs;
}

std::vector<double> layer_times(const ResolvedScenario& setup) {
  // The time of one microbatch of the scenario's size: with fixed costs per microbatch,
  // the per-sample time would weigh layers wrongly.
  const double microbatch = static_cast<double>(setup.training.global_batch) /
                            setup.training.data_parallel / setup.training.microbatches;
  std::vector<double> times;
  for (const ModelLayer& layer : setup.model.layers) {
    times.push_back(layer.fwd.seconds(microbatch, device_flops(setup, 0)) +
                    (layer.frozen ? 0 : layer.bwd.seconds(microbatch, device_flops(setup, 0))));
  }
  return times;
}

bool flop_counted(const ModelSpec& model) {
  for (const ModelLayer& layer : model.layers) {
    if (layer.fwd.flops_per_sample > 0 || layer.fwd.fixed_flops > 0) return true;
  }
  return false;
}

double device_speed(const ResolvedScenario& setup, int32_t device) {
  const DeviceSpec& d = setup.cluster.devices[device];
  return (flop_counted(setup.model) ? d.peak_flops : 1.0) * d.compute_scale;
}

std::vector<double> chunk_speeds(const ResolvedScenario& setup) {
  const ScheduleSpec& schedule = setup.schedule;
  const StageReplicas replicas = StageReplicas::of(schedule.stage_replicas, schedule.stages);
  const int64_t copies = int64_t{setup.training.tensor_parallel} * setup.training.context_parallel;
  const int64_t gpus = static_cast<int64_t>(setup.cluster.devices.size());
  const double reference = flop_counted(setup.model) ? setup.cluster.devices.front().peak_flops : 1;
  std::vector<double> speeds;
  for (int32_t c = 0; c < schedule.chunks(); ++c) {
    const int32_t first = chunk_device(setup, c);
    const int32_t count = schedule.stage_replicas.empty() ? 1 : replicas.replicas(c);
    double slowest = std::numeric_limits<double>::infinity();
    for (int64_t r = 0; r < setup.training.data_parallel; ++r) {
      for (int32_t k = 0; k < count; ++k) {
        const int64_t device = first + k + r * replicas.devices();
        for (int64_t g = device * copies; g < std::min(gpus, (device + 1) * copies); ++g) {
          slowest = std::min(slowest, device_speed(setup, static_cast<int32_t>(g)) / reference);
        }
      }
    }
    speeds.push_back(std::isfinite(slowest) ? slowest : 1.0);
  }
  return speeds;
}

std::vector<int32_t> place_layers(const ResolvedScenario& setup) {
  if (!setup.schedule.partition.empty()) return setup.schedule.partition;
  if (!setup.cluster.uneven_compute()) {
    return balanced_partition(layer_times(setup), setup.schedule.chunks());
  }
  return balanced_partition(layer_times(setup), setup.schedule.chunks(), chunk_speeds(setup));
}

std::vector<std::pair<int32_t, int32_t>> chunk_layer_ranges(const ResolvedScenario& setup) {
  std::vector<std::pair<int32_t, int32_t>> ranges;
  int32_t first = 0;
  for (int32_t count : place_layers(setup)) {
    ranges.emplace_back(first, first + count);
    first += count;
  }
  return ranges;
}

std::vector<SampleRange> equal_ranges(int32_t global_batch, int32_t microbatches) {
  std::vector<SampleRange> ranges;
  const int32_t base = global_batch / microbatches;
  const int32_t extra = global_batch % microbatches;
  int32_t lo = 0;
  for (int32_t m = 0; m < microbatches; ++m) {
    const int32_t size = base + (m < extra ? 1 : 0);
    ranges.push_back({lo, lo + size});
    lo += size;
  }
  return ranges;
}

namespace {

// Each copy of a chunk's ops at the speed of its device (sim/schedule/device_speeds.h): the
// chunk was priced at its first device's peak, with no compute_scale.
void run_at_device_speeds(Program& program, const ResolvedScenario& setup,
                          const PipelineLayout& layout) {
  const bool flops = flop_counted(setup.model);
  std::vector<double> priced;
  for (size_t c = 0; c < layout.costs.size(); ++c) {
    const int32_t device = chunk_device(setup, static_cast<int32_t>(c));
    priced.push_back(flops ? setup.cluster.devices[device].peak_flops : 1.0);
  }
  std::vector<double> speeds;
  for (int32_t d = 0; d < static_cast<int32_t>(setup.cluster.devices.size()); ++d) {
    speeds.push_back(device_speed(setup, d));
  }
  apply_device_speeds(program, priced, speeds);
}

// ZeRO's collectives as training.zero_stage, fsdp_reshard and fsdp_shard_size ask.
Sharding sharding_of(const TrainingSpec& training) {
  Sharding sharding;
  sharding.zero_stage = training.zero_stage;
  switch (training.fsdp_reshard) {
    case proto::Training::AFTER_BACKWARD:
      sharding.reshard = Sharding::Reshard::kAfterBackward;
      break;
    case proto::Training::AFTER_STEP:
      sharding.reshard = Sharding::Reshard::kAfterStep;
      break;
    default:
      sharding.reshard = Sharding::Reshard::kAfterEachPass;
  }
  sharding.shard_size = training.fsdp_shard_size;
  return sharding;
}

}  // namespace

Program build_program(const ResolvedScenario& setup) {
  PipelineLayout layout = make_layout(setup, place_layers(setup));
  const int32_t stages = setup.schedule.stages;
  const int32_t microbatches = setup.training.microbatches;
  const StageReplicas replicas = StageReplicas::of(setup.schedule.stage_replicas, stages);
  ComputeOrder order;
  ProductionTimes production_times;  // ZB-V: its receives are posted in production order
  switch (setup.schedule.kind) {
    case proto::GPIPE:
      order = replicas.replicated() ? gpipe_order(replicas, microbatches)
                                    : gpipe_order(stages, microbatches);
      break;
    case proto::ONE_F_ONE_B:
      order = one_f_one_b_order(replicas, microbatches);
      break;
    case proto::INTERLEAVED_ONE_F_ONE_B:
      order = interleaved_order(stages, setup.schedule.virtual_stages, microbatches);
      break;
    case proto::ZB_H1:
      order = zb_h1_order(stages, microbatches);
      break;
    case proto::ZB_H2:
      order = zb_h2_order(stages, microbatches);
      break;
    case proto::ZB_V: {
      TimedComputeOrder timed = zb_v_schedule(stages, microbatches, chunk_pass_costs(layout));
      order = std::move(timed.order);
      production_times = std::move(timed.end_s);
      break;
    }
    case proto::ZB_AUTO: {
      const double limit = setup.schedule.memory_limit_microbatches;
      ChosenOrder chosen = choose_zb_auto_order(
          setup, layout,
          zb_auto_candidates(microbatches, linear_pipeline_costs(setup, layout),
                             limit > 0 ? limit : stages));
      order = std::move(chosen.order);
      production_times = std::move(chosen.production_times);
      break;
    }
    case proto::DUALPIPE: {
      order = dualpipe_order(stages, microbatches);
      production_times = dualpipe_end_times(order, chunk_pass_costs(layout));
      break;
    }
    case proto::UMPIPE: {
      std::vector<int32_t> forwards, backwards;
      for (const StagePlan& plan : setup.schedule.stage_plans.stages) {
        forwards.push_back(static_cast<int32_t>(plan.forward_sizes.size()));
        backwards.push_back(static_cast<int32_t>(plan.backward_sizes.size()));
      }
      order = flush_order(forwards, backwards);
      break;
    }
    case proto::PIPEFB:
    case proto::PIPEDREAM_ASYNC:
    case proto::PIPEDREAM_2BW:
    case proto::APAPO:
      break;  // these order their devices themselves
  }
  const OffloadSpec& offload = setup.schedule.offload;
  if (offload.enabled) {
    layout.prefetch_horizon = offload.prefetch_horizon;
    layout.offload_fraction.assign(layout.costs.size(), 0.0);
    if (offload.weight_stashes) layout.offload_weight_stashes.assign(layout.costs.size(), false);
    for (int32_t s : offload.stages) {
      if (offload.activations) layout.offload_fraction[s] = offload.fraction;
      if (offload.weight_stashes) layout.offload_weight_stashes[s] = true;
    }
    if (offload.policy == proto::Offload::SELECTIVE) {
      layout.offload_fraction = select_offloaded_stages(layout, order, setup.cluster);
    }
  }
  if (is_asynchronous(setup.schedule.kind)) {
    Program program = asynchronous_program(setup, layout);
    run_at_device_speeds(program, setup, layout);
    return program;
  }
  Program program =
      setup.schedule.kind == proto::PIPEFB
          ? pipefb_program(layout, setup.schedule.pipefb_recompute, setup.training.iterations)
          : lower(layout, order, setup.training.iterations, production_times);
  if (!setup.schedule.comm_overlap) block_compute_on_transfers(program);
  if (setup.training.grad_reduce_after_flush) reduce_after_flush(program);
  if (setup.training.expert_parallel > 1) {
    program = add_expert_all_to_alls(program, layout, expert_overlap(setup));
  }
  if (setup.training.zero_stage > 0) {
    program = shard_data_parallel(program, layout, sharding_of(setup.training));
  }
  program = bucket_gradients(program, layout, setup.training.grad_bucket_bytes);
  if (setup.training.context_parallel > 1) {
    program = expand_context_parallel(program, layout, setup.training.context_parallel,
                                      setup.training.context_parallel_algorithm);
  }
  if (setup.training.tensor_parallel > 1) {
    program = expand_tensor_parallel(program, layout, setup.training.tensor_parallel);
  }
  program.expert_dispatch = setup.expert_dispatch;
  run_at_device_speeds(program, setup, layout);
  validate_program(program);
  return program;
}

}  // namespace pipetwin
