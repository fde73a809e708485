// make_layout (sim/driver/build_program.h), by what it decides:
//  - layout_groups: who runs what (replicas, devices, expert and context groups);
//  - chunk_work: each chunk's passes on one of its GPUs, the collectives inside them and what
//    crosses its cut;
//  - add_chunk_memory: each chunk's stash, gradients and optimizer step, and the state its
//    layers keep resident on every device that holds them;
//  - the reserves a device keeps for one layer at a time (rebuilt activations, ZeRO-3's
//    gathered weights), added at the end.
#include <algorithm>
#include <cmath>
#include <set>

#include "sim/driver/build_program.h"
#include "sim/model/backward_split.h"
#include "sim/model/number_format.h"
#include "sim/model/training_memory.h"
#include "sim/schedule/dualpipe_order.h"
#include "sim/schedule/sharded_data_parallel.h"

namespace pipetwin {
namespace {

int32_t largest_size(const std::vector<SampleRange>& ranges) {
  int32_t largest = 0;
  for (const SampleRange& r : ranges) largest = std::max(largest, r.hi - r.lo);
  return largest;
}

// What one GPU of a stage's T (tensor parallelism) and C (context parallelism) computes, holds
// and sends; the expansion onto the T x C GPUs comes after lowering
// (sim/schedule/tensor_parallel.h, context_parallel.h).
struct GpuShare {
  explicit GpuShare(const TrainingSpec& training)
      : tp(training.tensor_parallel),
        cp(training.context_parallel),
        per_gpu(1.0 / tp),
        per_sequence_gpu(1.0 / cp),
        sequence_parallel(training.sequence_parallel) {}

  // Korthikanti et al.: without sequence parallelism part of a block's activations is kept
  // whole on every GPU of the stage.
  double bytes(double bytes, double undivided) const {
    if (tp == 1) return bytes * per_sequence_gpu;
    if (sequence_parallel) undivided = 0;
    return (undivided + (bytes - undivided) * per_gpu) * per_sequence_gpu;
  }

  int32_t tp, cp;
  double per_gpu, per_sequence_gpu;
  bool sequence_parallel;
};

// ZeRO and FSDP: who shares a layer's training state, and what a GPU keeps of it.
struct StateSharding {
  explicit StateSharding(const TrainingSpec& training)
      : training_(training),
        per_parameter(bytes_per_parameter(training)),
        holders_(training.data_parallel * training.context_parallel),
        expert_holders_(
            shard_group_size(training.expert_data_parallel(), training.fsdp_shard_size)) {}

  // A GPU's parameters of a layer's routed experts: 1 / (EP x ETP) of them.
  double expert_parameters(const ModelLayer& layer) const {
    const int32_t ep = training_.expert_parallel;
    return ep > 1 && layer.moe.experts > 0
               ? static_cast<double>(layer.moe.expert_parameter_bytes) /
                     (static_cast<double>(ep) * training_.expert_tensor()) / kFp32BytesPerParameter
               : 0.0;
  }

  // The state a GPU keeps of a layer of `parameters` (its share): its dense part shared by the
  // replicas and context ranks (by a shard group of them with hybrid sharding), its routed
  // experts by the expert-data-parallel group. FSDP with the weights whole all step
  // (fsdp_reshard AFTER_STEP) accumulates whole gradients, scattered after the last backward.
  double resident_bytes(const ModelLayer& layer, double parameters) const {
    const double experts = expert_parameters(layer);
    return state_bytes(shard_group_size(holders_, training_.fsdp_shard_size)) *
               (parameters - experts) +
           state_bytes(expert_holders_) * experts;
  }

  // ZeRO stage 3 across more than one holder: the weights are gathered layer by layer.
  bool gathers_weights() const { return training_.zero_stage == 3 && holders_ > 1; }

  const TrainingSpec& training_;
  const BytesPerParameter per_parameter;

 private:
  double state_bytes(int32_t sharers) const {
    BytesPerParameter b = sharded(per_parameter, training_.zero_stage, sharers);
    if (training_.fsdp_reshard == proto::Training::AFTER_STEP)
      b.gradients = per_parameter.gradients;
    return b.total();
  }

  int32_t holders_, expert_holders_;
};

// Who runs what: the replicas, each replica's devices, the expert and context groups, and the
// share of the weights an FP8 parameter gather moves per gradient byte.
PipelineLayout layout_groups(const ResolvedScenario& setup) {
  const StageReplicas stage_replicas =
      StageReplicas::of(setup.schedule.stage_replicas, setup.schedule.stages);
  PipelineLayout layout;
  layout.replicas = setup.training.data_parallel;
  layout.stage_replicas = setup.schedule.stage_replicas;
  layout.devices_per_replica = stage_replicas.devices();
  layout.expert_parallel = setup.training.expert_parallel;
  if (layout.expert_parallel > 1) {
    layout.expert_group_replicas = setup.training.expert_group_replicas();
    layout.expert_data_parallel = setup.training.expert_data_parallel();
    layout.expert_tensor_parallel = setup.training.expert_tensor();
  }
  layout.tensor_parallel = setup.training.tensor_parallel;
  layout.context_parallel = setup.training.context_parallel;
  if (setup.training.fp8_param_gather) {
    const NumberFormat format = number_format(setup.training.precision, setup.training.fp8_scaling);
    layout.weight_gather_bytes_per_gradient_byte =
        format.element_bytes / bytes_per_parameter(setup.training).gradients;
  }
  layout.num_devices = stage_replicas.devices() * layout.replicas;
  layout.global_batch = setup.training.global_batch;
  layout.static_bytes.assign(layout.num_devices, 0);
  return layout;
}

// Layers [first, last) of chunk c (of `chunks`) on `device`: their passes on one GPU, the tensor-,
// expert- and context-parallel collectives inside them, and the outputs that cross the chunk's cut.
StageCost chunk_work(const ResolvedScenario& setup, const GpuShare& share, int32_t c,
                     int32_t chunks, int32_t first, int32_t last, int32_t device) {
  const auto& layers = setup.model.layers;
  const double flops = device_flops(setup, device);
  const int32_t tp = share.tp, cp = share.cp;
  // training.fp8_dispatch: of a forward's two all-to-alls, the dispatch sends the tokens in the
  // low-precision format and the combine in BF16.
  const NumberFormat format = number_format(setup.training.precision, setup.training.fp8_scaling);
  const double ep_fwd_byte_share =
      setup.training.fp8_dispatch ? (1 + format.element_bytes / 2) / 2 : 1.0;
  StageCost cost;
  cost.trains = false;
  double fwd_flops = 0, bwd_flops = 0, attention_flops = 0;  // per sample, whole layers
  double column_weight_gradient_flops = 0;                   // of column-parallel linears
  for (int32_t l = first; l < last; ++l) {
    const ModelLayer& layer = layers[l];
    cost.fwd.add(layer.fwd.curve(flops, tp, cp));
    cost.tp_fwd_collectives += layer.tp_fwd_collectives;
    cost.tp_fwd_bytes_per_sample +=
        (layer.tp_fwd_collectives * layer.tp_allreduce_bytes_per_sample +
         layer.tp_fwd_extra_bytes_per_sample) *
        share.per_sequence_gpu;
    // With tensor parallelism each GPU exchanges its 1/T of the tokens (sequence parallel).
    cost.ep_fwd_all_to_alls += layer.ep_fwd_all_to_alls;
    cost.ep_fwd_bytes_per_sample += layer.ep_fwd_all_to_alls * layer.moe.dispatch_bytes_per_sample *
                                    share.per_gpu * share.per_sequence_gpu * ep_fwd_byte_share;
    if (cp > 1 && layer.cp_kv_bytes_per_sample > 0) {
      cost.cp_layers += 1;
      // The whole sequence's keys and values of this GPU's heads; a Ulysses GPU sends its
      // 1/C of the tokens for its heads.
      cost.cp_kv_bytes_per_sample += layer.cp_kv_bytes_per_sample * share.per_gpu;
      cost.cp_qkvo_bytes_per_sample +=
          layer.cp_qkvo_bytes_per_sample * share.per_gpu * share.per_sequence_gpu;
    }
    fwd_flops += layer.fwd.flops_per_sample;
    bwd_flops += layer.frozen ? 0 : layer.bwd.flops_per_sample;
    attention_flops += layer.cp_attention_flops_per_sample;
    cost.layers += 1;
    if (layer.frozen) continue;  // forward only
    cost.trains = true;
    cost.bwd.add(layer.bwd.curve(flops, tp, cp));
    cost.bwd_input.add(input_gradient_cost(layer).curve(flops, tp, cp));
    cost.bwd_weight.add(weight_gradient_cost(layer).curve(flops, tp, cp));
    cost.tp_bwd_collectives += layer.tp_bwd_collectives;
    cost.tp_bwd_bytes_per_sample +=
        (layer.tp_bwd_collectives * layer.tp_allreduce_bytes_per_sample +
         layer.tp_bwd_extra_bytes_per_sample) *
        share.per_sequence_gpu;
    if (setup.training.tensor_parallel_grad_overlap && tp > 1) {
      // Each input-gradient all-reduce runs under its column-parallel linear's weight
      // gradient; with sequence parallelism that is the reduce-scatter of the pair (the
      // all-gather of the output gradient comes before the backward can use it).
      cost.tp_bwd_hidden_collectives += layer.tp_bwd_grad_collectives;
      cost.tp_bwd_hidden_bytes_per_sample += layer.tp_bwd_grad_collectives *
                                             layer.tp_allreduce_bytes_per_sample *
                                             share.per_sequence_gpu;
      cost.tp_bwd_hidden_in_pairs = setup.training.sequence_parallel;
      for (const LayerGemm& g : layer.gemms) {
        if (g.tensor_split == LayerGemm::Split::kN && g.part == LayerGemm::Part::kWeights) {
          column_weight_gradient_flops += g.flops_per_sample();
        }
      }
    }
    cost.ep_bwd_all_to_alls += layer.ep_bwd_all_to_alls;
    cost.ep_bwd_bytes_per_sample += layer.ep_bwd_all_to_alls * layer.moe.dispatch_bytes_per_sample *
                                    share.per_gpu * share.per_sequence_gpu;
  }
  // What crosses the cut: outputs of layers before it that a layer after it reads.
  if (c + 1 < chunks) {
    for (int32_t l = 0; l < last; ++l) {
      for (int consumer : layers[l].consumers) {
        if (consumer >= last) {
          // Megatron's scatter-gather: each GPU sends 1/T to its peer of the next stage.
          cost.output_bytes_per_sample +=
              layers[l].activation_bytes_per_sample * share.per_gpu * share.per_sequence_gpu;
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
  return cost;
}

// Per device of a replica, what it holds for one layer at a time.
struct Reserves {
  explicit Reserves(int32_t devices) : recompute(devices, 0), gather(devices, 0) {}
  std::vector<double> recompute;  // the largest activations one backward rebuilds
  std::vector<double> gather;     // ZeRO-3: gathered weights (the layer and its prefetch)
};

// Layers [first, last) of chunk c on `device`: the chunk's stash, gradients, weights and
// optimizer step into `cost`, their resident state into every device that holds the chunk
// (its replicas, replicated stages, DualPipe's reverse copy), and the device's reserves.
// Returns the largest activations per sample one backward of the chunk rebuilds.
double add_chunk_memory(const ResolvedScenario& setup, const GpuShare& share,
                        const StateSharding& state, int32_t c, int32_t chunks, int32_t first,
                        int32_t last, int32_t device, StageCost& cost, PipelineLayout& layout,
                        Reserves& reserves) {
  const auto& layers = setup.model.layers;
  const BytesPerParameter& per_parameter = state.per_parameter;
  const StageReplicas stage_replicas =
      StageReplicas::of(setup.schedule.stage_replicas, setup.schedule.stages);
  const bool dualpipe = setup.schedule.kind == proto::DUALPIPE;
  double transient_per_sample = 0;
  for (int32_t l = first; l < last; ++l) {
    const ModelLayer& layer = layers[l];
    const double parameters = layer.parameter_bytes / kFp32BytesPerParameter * share.per_gpu;
    const int64_t layer_weight_bytes = std::llround(per_parameter.weights * parameters);
    if (l == first) cost.first_layer_weight_bytes = layer_weight_bytes;
    cost.last_layer_weight_bytes = layer_weight_bytes;
    cost.weight_bytes += layer_weight_bytes;
    // ZeRO stage 3 holds a gathered layer and the next one it prefetches; kept whole past
    // the pass (fsdp_reshard), every layer of the device's chunks.
    if (state.gathers_weights()) {
      if (setup.training.fsdp_reshard == proto::Training::AFTER_EACH_PASS) {
        reserves.gather[device] = std::max(reserves.gather[device], 2.0 * layer_weight_bytes);
      } else {
        reserves.gather[device] += layer_weight_bytes;
      }
    }
    // A frozen layer runs forward only: no backward, stash, gradient or optimizer state.
    const double resident =
        layer.frozen ? per_parameter.weights * parameters : state.resident_bytes(layer, parameters);
    for (int32_t r = 0; r < layout.replicas; ++r) {
      for (int32_t k = 0; k < stage_replicas.replicas(c % setup.schedule.stages); ++k) {
        layout.static_bytes[device + r * layout.devices_per_replica + k] += std::llround(resident);
      }
      if (dualpipe) {  // the reverse pipeline's copy of the chunk
        layout.static_bytes[chunk_device(setup, chunks + c) + r * layout.devices_per_replica] +=
            std::llround(resident);
      }
    }
    if (layer.frozen) continue;
    const double stash =
        share.bytes(layer.stash_bytes_per_sample, layer.tp_undivided_stash_bytes_per_sample);
    cost.stash_bytes_per_sample += stash;
    // W's share of the stash shrinks with tensor parallelism as the whole stash does (with
    // full recomputation, as the rebuilt one does).
    if (layer.weight_stash_rebuilt && layer.transient_bytes_per_sample > 0) {
      cost.bwd_weight_stash_bytes_per_sample +=
          weight_gradient_stash_per_sample(layer) *
          share.bytes(layer.transient_bytes_per_sample,
                      layer.transient_undivided_bytes_per_sample) /
          layer.transient_bytes_per_sample;
    } else if (layer.stash_bytes_per_sample > 0) {
      cost.bwd_weight_stash_bytes_per_sample +=
          weight_gradient_stash_per_sample(layer) * stash / layer.stash_bytes_per_sample;
    }
    transient_per_sample = std::max(
        transient_per_sample,
        share.bytes(layer.transient_bytes_per_sample, layer.transient_undivided_bytes_per_sample));
    cost.gradient_bytes += std::llround(per_parameter.gradients * parameters);
    cost.expert_gradient_bytes +=
        std::llround(per_parameter.gradients * state.expert_parameters(layer));
    // ZeRO's replicas each update their share of it (sim/schedule/sharded_data_parallel.h).
    cost.optim_s += layer.optim_seconds + setup.model.optimizer_seconds_per_parameter * parameters;
  }
  return transient_per_sample;
}

}  // namespace

PipelineLayout make_layout(const ResolvedScenario& setup,
                           const std::vector<int32_t>& layers_per_chunk) {
  PipelineLayout layout = layout_groups(setup);
  const int32_t chunks = static_cast<int32_t>(layers_per_chunk.size());
  const auto ranges =
      equal_ranges(setup.training.global_batch / layout.replicas, setup.training.microbatches);
  const GpuShare share(setup.training);
  const StateSharding state(setup.training);
  Reserves reserves(layout.devices_per_replica);
  int32_t first = 0;
  std::set<int32_t> devices_with_a_chunk;
  for (int32_t c = 0; c < chunks; ++c) {
    const int32_t device = chunk_device(setup, c);
    const int32_t last = first + layers_per_chunk[c];  // exclusive
    StageCost cost = chunk_work(setup, share, c, chunks, first, last, device);
    // Megatron-Core numbers the model chunks of each rank: its first one reduces in buckets.
    const bool first_on_device = devices_with_a_chunk.insert(device).second;
    cost.bucketed = !setup.training.buckets_first_chunk_only || first_on_device;
    const double transient_per_sample = add_chunk_memory(setup, share, state, c, chunks, first,
                                                         last, device, cost, layout, reserves);
    layout.stage_device.push_back(device);
    layout.costs.push_back(cost);
    if (setup.schedule.kind == proto::UMPIPE) {
      layout.fwd_ranges.push_back(ranges_of(setup.schedule.stage_plans.stages[c].forward_sizes));
      layout.bwd_ranges.push_back(ranges_of(setup.schedule.stage_plans.stages[c].backward_sizes));
    } else {
      layout.fwd_ranges.push_back(ranges);
      layout.bwd_ranges.push_back(ranges);
    }
    reserves.recompute[device] = std::max(
        reserves.recompute[device], transient_per_sample * largest_size(layout.bwd_ranges.back()));
    first = last;
  }
  if (setup.schedule.kind == proto::DUALPIPE) add_reverse_pipeline(layout);
  for (int32_t d = 0; d < layout.devices_per_replica; ++d) {
    for (int32_t r = 0; r < layout.replicas; ++r) {
      layout.static_bytes[d + r * layout.devices_per_replica] +=
          std::llround(reserves.recompute[d] + reserves.gather[d]);
    }
  }
  return layout;
}

}  // namespace pipetwin
