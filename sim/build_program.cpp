#include "sim/build_program.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "sim/model/backward_split.h"
#include "sim/model/number_format.h"
#include "sim/model/training_memory.h"
#include "sim/network/network_model.h"
#include "sim/partition/balanced_partition.h"
#include "sim/pipeline_pass_costs.h"
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
#include "sim/zero_bubble_auto_choice.h"

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

int32_t largest_size(const std::vector<SampleRange>& ranges) {
  int32_t largest = 0;
  for (const SampleRange& r : ranges) largest = std::max(largest, r.hi - r.lo);
  return largest;
}

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

PipelineLayout make_layout(const ResolvedScenario& setup,
                           const std::vector<int32_t>& layers_per_chunk) {
  const auto& layers = setup.model.layers;
  const int32_t chunks = static_cast<int32_t>(layers_per_chunk.size());
  const int32_t replicas = setup.training.data_parallel;
  const StageReplicas stage_replicas =
      StageReplicas::of(setup.schedule.stage_replicas, setup.schedule.stages);
  PipelineLayout layout;
  layout.replicas = replicas;
  layout.stage_replicas = setup.schedule.stage_replicas;
  layout.devices_per_replica = stage_replicas.devices();
  layout.expert_parallel = setup.training.expert_parallel;
  if (layout.expert_parallel > 1) {
    layout.expert_group_replicas = setup.training.expert_group_replicas();
    layout.expert_data_parallel = setup.training.expert_data_parallel();
    layout.expert_tensor_parallel = setup.training.expert_tensor();
  }
  layout.context_parallel = setup.training.context_parallel;
  const NumberFormat format = number_format(setup.training.precision, setup.training.fp8_scaling);
  if (setup.training.fp8_param_gather) {
    layout.weight_gather_bytes_per_gradient_byte =
        format.element_bytes / bytes_per_parameter(setup.training).gradients;
  }
  layout.num_devices = stage_replicas.devices() * replicas;
  layout.global_batch = setup.training.global_batch;
  layout.static_bytes.assign(layout.num_devices, 0);
  const auto ranges =
      equal_ranges(setup.training.global_batch / replicas, setup.training.microbatches);
  const BytesPerParameter per_parameter = bytes_per_parameter(setup.training);
  // Tensor parallelism: what one GPU of a stage's T computes, holds and sends (the
  // expansion onto the T GPUs comes after lowering, sim/schedule/tensor_parallel.h).
  const int32_t tp = setup.training.tensor_parallel;
  const double per_gpu = 1.0 / tp;
  // Context parallelism: each of C GPUs computes, keeps and sends its 1/C of every sequence
  // (the expansion comes after lowering too, sim/schedule/context_parallel.h); all hold the
  // same weights, and shard ZeRO's state with the replicas.
  const int32_t cp = setup.training.context_parallel;
  const double per_sequence_gpu = 1.0 / cp;
  const int32_t holders = replicas * cp;
  // Korthikanti et al.: without sequence parallelism part of a block's activations is kept
  // whole on every GPU of the stage.
  const auto per_gpu_bytes = [&](double bytes, double undivided) {
    if (tp == 1) return bytes * per_sequence_gpu;
    if (setup.training.sequence_parallel) undivided = 0;
    return (undivided + (bytes - undivided) * per_gpu) * per_sequence_gpu;
  };
  // Recomputation: the largest activations one backward rebuilds, per device (chunks of one
  // device run their backwards one at a time).
  std::vector<double> recompute_reserve(layout.devices_per_replica, 0);
  std::vector<double> gather_reserve(layout.devices_per_replica, 0);
  // ZeRO: a layer's state shared by the replicas; its routed experts' by the replicas
  // holding the same experts (the expert-data-parallel group).
  const int32_t zero_stage = setup.training.zero_stage;
  const int32_t ep = setup.training.expert_parallel;
  // A GPU's parameters of a layer's routed experts: 1 / (EP x ETP) of them.
  const auto expert_parameters = [&](const ModelLayer& layer) {
    return ep > 1 && layer.moe.experts > 0
               ? static_cast<double>(layer.moe.expert_parameter_bytes) /
                     (static_cast<double>(ep) * setup.training.expert_tensor()) /
                     kFp32BytesPerParameter
               : 0.0;
  };
  // Hybrid sharding: the state 1/S over a shard group of S GPUs instead of all holders.
  const int32_t shard_size = setup.training.fsdp_shard_size;
  const int32_t expert_holders =
      shard_group_size(setup.training.expert_data_parallel(), shard_size);
  // FSDP with the weights whole all step (fsdp_reshard AFTER_STEP) accumulates whole
  // gradients, scattered once after the last backward.
  const proto::Training::FsdpReshard reshard = setup.training.fsdp_reshard;
  const auto state_bytes = [&](int32_t sharers) {
    BytesPerParameter b = sharded(per_parameter, zero_stage, sharers);
    if (reshard == proto::Training::AFTER_STEP) b.gradients = per_parameter.gradients;
    return b.total();
  };
  const auto resident_bytes = [&](const ModelLayer& layer, double parameters) {
    const double experts = expert_parameters(layer);
    return state_bytes(shard_group_size(holders, shard_size)) * (parameters - experts) +
           state_bytes(expert_holders) * experts;
  };
  const bool dualpipe = setup.schedule.kind == proto::DUALPIPE;
  // training.fp8_dispatch: of a forward's two all-to-alls, the dispatch sends the tokens in the
  // low-precision format and the combine in BF16.
  const double ep_fwd_byte_share =
      setup.training.fp8_dispatch ? (1 + format.element_bytes / 2) / 2 : 1.0;

  int32_t first = 0;
  std::set<int32_t> devices_with_a_chunk;
  for (int32_t c = 0; c < chunks; ++c) {
    const int32_t device = chunk_device(setup, c);
    const int32_t last = first + layers_per_chunk[c];  // exclusive
    StageCost cost;
    cost.trains = false;
    // Megatron-Core numbers the model chunks of each rank: its first one reduces in buckets.
    const bool first_on_device = devices_with_a_chunk.insert(device).second;
    cost.bucketed = !setup.training.buckets_first_chunk_only || first_on_device;
    double transient_per_sample = 0;
    double fwd_flops = 0, bwd_flops = 0, attention_flops = 0;  // per sample, whole layers
    double column_weight_gradient_flops = 0;                   // of column-parallel linears
    for (int32_t l = first; l < last; ++l) {
      const ModelLayer& layer = layers[l];
      const double parameters = layer.parameter_bytes / kFp32BytesPerParameter * per_gpu;
      cost.fwd.add(layer.fwd.curve(device_flops(setup, device), tp, cp));
      cost.tp_fwd_collectives += layer.tp_fwd_collectives;
      cost.tp_fwd_bytes_per_sample +=
          (layer.tp_fwd_collectives * layer.tp_allreduce_bytes_per_sample +
           layer.tp_fwd_extra_bytes_per_sample) *
          per_sequence_gpu;
      // With tensor parallelism each GPU exchanges its 1/T of the tokens (sequence parallel).
      cost.ep_fwd_all_to_alls += layer.ep_fwd_all_to_alls;
      cost.ep_fwd_bytes_per_sample += layer.ep_fwd_all_to_alls *
                                      layer.moe.dispatch_bytes_per_sample * per_gpu *
                                      per_sequence_gpu * ep_fwd_byte_share;
      if (cp > 1 && layer.cp_kv_bytes_per_sample > 0) {
        cost.cp_layers += 1;
        // The whole sequence's keys and values of this GPU's heads; a Ulysses GPU sends its
        // 1/C of the tokens for its heads.
        cost.cp_kv_bytes_per_sample += layer.cp_kv_bytes_per_sample * per_gpu;
        cost.cp_qkvo_bytes_per_sample +=
            layer.cp_qkvo_bytes_per_sample * per_gpu * per_sequence_gpu;
      }
      fwd_flops += layer.fwd.flops_per_sample;
      bwd_flops += layer.frozen ? 0 : layer.bwd.flops_per_sample;
      attention_flops += layer.cp_attention_flops_per_sample;
      const int64_t layer_weight_bytes = std::llround(per_parameter.weights * parameters);
      if (l == first) cost.first_layer_weight_bytes = layer_weight_bytes;
      cost.last_layer_weight_bytes = layer_weight_bytes;
      cost.layers += 1;
      cost.weight_bytes += layer_weight_bytes;
      // ZeRO stage 3 holds a gathered layer and the next one it prefetches; kept whole past
      // the pass (fsdp_reshard), every layer of the device's chunks.
      if (zero_stage == 3 && holders > 1) {
        if (reshard == proto::Training::AFTER_EACH_PASS) {
          gather_reserve[device] = std::max(gather_reserve[device], 2.0 * layer_weight_bytes);
        } else {
          gather_reserve[device] += layer_weight_bytes;
        }
      }
      // A frozen layer runs forward only: no backward, stash, gradient or optimizer state.
      const double resident =
          layer.frozen ? per_parameter.weights * parameters : resident_bytes(layer, parameters);
      for (int32_t r = 0; r < replicas; ++r) {
        for (int32_t k = 0; k < stage_replicas.replicas(c % setup.schedule.stages); ++k) {
          layout.static_bytes[device + r * layout.devices_per_replica + k] +=
              std::llround(resident);
        }
        if (dualpipe) {  // the reverse pipeline's copy of the chunk
          layout.static_bytes[chunk_device(setup, chunks + c) + r * layout.devices_per_replica] +=
              std::llround(resident);
        }
      }
      if (layer.frozen) continue;
      cost.trains = true;
      cost.bwd.add(layer.bwd.curve(device_flops(setup, device), tp, cp));
      cost.bwd_input.add(input_gradient_cost(layer).curve(device_flops(setup, device), tp, cp));
      cost.bwd_weight.add(weight_gradient_cost(layer).curve(device_flops(setup, device), tp, cp));
      cost.tp_bwd_collectives += layer.tp_bwd_collectives;
      cost.tp_bwd_bytes_per_sample +=
          (layer.tp_bwd_collectives * layer.tp_allreduce_bytes_per_sample +
           layer.tp_bwd_extra_bytes_per_sample) *
          per_sequence_gpu;
      if (setup.training.tensor_parallel_grad_overlap && tp > 1) {
        // Each input-gradient all-reduce runs under its column-parallel linear's weight
        // gradient; with sequence parallelism that is the reduce-scatter of the pair (the
        // all-gather of the output gradient comes before the backward can use it).
        cost.tp_bwd_hidden_collectives += layer.tp_bwd_grad_collectives;
        cost.tp_bwd_hidden_bytes_per_sample +=
            layer.tp_bwd_grad_collectives * layer.tp_allreduce_bytes_per_sample * per_sequence_gpu;
        cost.tp_bwd_hidden_in_pairs = setup.training.sequence_parallel;
        for (const LayerGemm& g : layer.gemms) {
          if (g.tensor_split == LayerGemm::Split::kN && g.part == LayerGemm::Part::kWeights) {
            column_weight_gradient_flops += g.flops_per_sample();
          }
        }
      }
      cost.ep_bwd_all_to_alls += layer.ep_bwd_all_to_alls;
      cost.ep_bwd_bytes_per_sample += layer.ep_bwd_all_to_alls *
                                      layer.moe.dispatch_bytes_per_sample * per_gpu *
                                      per_sequence_gpu;
      const double stash =
          per_gpu_bytes(layer.stash_bytes_per_sample, layer.tp_undivided_stash_bytes_per_sample);
      cost.stash_bytes_per_sample += stash;
      // W's share of the stash shrinks with tensor parallelism as the whole stash does (with
      // full recomputation, as the rebuilt one does).
      if (layer.weight_stash_rebuilt && layer.transient_bytes_per_sample > 0) {
        cost.bwd_weight_stash_bytes_per_sample +=
            weight_gradient_stash_per_sample(layer) *
            per_gpu_bytes(layer.transient_bytes_per_sample,
                          layer.transient_undivided_bytes_per_sample) /
            layer.transient_bytes_per_sample;
      } else if (layer.stash_bytes_per_sample > 0) {
        cost.bwd_weight_stash_bytes_per_sample +=
            weight_gradient_stash_per_sample(layer) * stash / layer.stash_bytes_per_sample;
      }
      transient_per_sample =
          std::max(transient_per_sample, per_gpu_bytes(layer.transient_bytes_per_sample,
                                                       layer.transient_undivided_bytes_per_sample));
      cost.gradient_bytes += std::llround(per_parameter.gradients * parameters);
      cost.expert_gradient_bytes +=
          std::llround(per_parameter.gradients * expert_parameters(layer));
      // ZeRO's replicas each update their share of it (sim/schedule/sharded_data_parallel.h).
      cost.optim_s +=
          layer.optim_seconds + setup.model.optimizer_seconds_per_parameter * parameters;
    }
    // What crosses the cut: outputs of layers before it that a layer after it reads.
    if (c + 1 < chunks) {
      for (int32_t l = 0; l < last; ++l) {
        for (int consumer : layers[l].consumers) {
          if (consumer >= last) {
            // Megatron's scatter-gather: each GPU sends 1/T to its peer of the next stage.
            cost.output_bytes_per_sample +=
                layers[l].activation_bytes_per_sample * per_gpu * per_sequence_gpu;
            break;
          }
        }
      }
    }
    // The attention core's share of the FLOPs: a forward's, and a backward's (twice the
    // forward's, as for every GEMM), under which a ring passes keys and values.
    if (fwd_flops > 0) cost.cp_fwd_attention_share = std::min(1.0, attention_flops / fwd_flops);
    if (bwd_flops > 0) cost.cp_bwd_attention_share = std::min(1.0, 2 * attention_flops / bwd_flops);
    // The column-parallel linears' weight gradients' share of a backward's FLOPs (a GEMM's
    // weight gradient costs what its forward does).
    if (bwd_flops > 0) {
      cost.tp_bwd_hidden_share = std::min(1.0, column_weight_gradient_flops / bwd_flops);
    }
    layout.stage_device.push_back(device);
    layout.costs.push_back(cost);
    if (setup.schedule.kind == proto::UMPIPE) {
      layout.fwd_ranges.push_back(ranges_of(setup.schedule.stage_plans.stages[c].forward_sizes));
      layout.bwd_ranges.push_back(ranges_of(setup.schedule.stage_plans.stages[c].backward_sizes));
    } else {
      layout.fwd_ranges.push_back(ranges);
      layout.bwd_ranges.push_back(ranges);
    }
    recompute_reserve[device] = std::max(
        recompute_reserve[device], transient_per_sample * largest_size(layout.bwd_ranges.back()));
    first = last;
  }
  if (dualpipe) add_reverse_pipeline(layout);
  for (int32_t d = 0; d < layout.devices_per_replica; ++d) {
    for (int32_t r = 0; r < replicas; ++r) {
      layout.static_bytes[d + r * layout.devices_per_replica] +=
          std::llround(recompute_reserve[d] + gather_reserve[d]);
    }
  }
  return layout;
}

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
