// Lowering: turns a compute-only schedule into a Program, through four passes that each
// add one kind of work (after PyTorch pipelining's passes over an action list):
//   lowering_compute.h    every compute lane: FWD, BWD (or BWD_INPUT, BWD_WEIGHT), OPTIM
//   lowering_transfers.h  SEND/RECV pairs and data dependencies between stages
//   lowering_offload.h    OFFLOAD/RELOAD of activations and weight stashes, copy lanes
//   lowering_updates.h    the dependencies of each update, ALLREDUCEs of its gradients
// over every iteration (lower) or over a run whose compute order spans the iterations
// (lower_run). The passes after lowering (blocking_transfers.h, tensor_parallel.h, and
// weight_versions.h for asynchronous pipelines) work on the Program it returns; PipeFB's
// Program comes from pipefb_program.h.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/program/program.h"
#include "sim/schedule/async_order.h"
#include "sim/schedule/compute_order.h"
#include "sim/spec/cost_curve.h"
#include "sim/spec/expert_folding.h"

namespace pipetwin {

// Per-sample costs of one pipeline stage (a model chunk) on its device.
struct StageCost {
  CostCurve fwd;  // seconds of one pass over b samples
  CostCurve bwd;
  double output_bytes_per_sample = 0;  // activations to the next stage (and grads back)
  double stash_bytes_per_sample = 0;   // kept from FWD until BWD
  // Zero-bubble schedules: the backward split into the input gradient (BWD_INPUT) and the
  // weight gradients (BWD_WEIGHT), bwd_input + bwd_weight = bwd, and the part of the stash
  // that BWD_WEIGHT still needs, freed when it ends (BWD_INPUT frees the rest).
  CostCurve bwd_input;
  CostCurve bwd_weight;
  double bwd_weight_stash_bytes_per_sample = 0;
  int64_t gradient_bytes = 0;  // all-reduced across data-parallel replicas
  // The part of gradient_bytes in routed experts that expert parallelism spreads: summed
  // only over the replicas holding the same experts (the expert-data-parallel group).
  int64_t expert_gradient_bytes = 0;
  int64_t weight_bytes = 0;  // the stage's weights in the training precision
  // ZeRO stage 3 gathers a pass's layers one by one: the first a forward needs, the first a
  // backward needs (the stage's last layer), and how many there are.
  int64_t first_layer_weight_bytes = 0;
  int64_t last_layer_weight_bytes = 0;
  int32_t layers = 0;
  // Its gradient reduction is split into buckets (training.grad_bucket_mb); Megatron-Core's
  // default buckets only the first model chunk's, the one on the critical path.
  bool bucketed = true;
  double optim_s = 0;  // the stage's optimizer step
  // False when every layer is frozen (FreezePipe): nothing upstream trains either, so
  // the gradient sent back into this stage carries no bytes (a token keeps the order).
  bool trains = true;
  // Tensor parallelism: the all-reduces of one FWD and one BWD among the stage's GPUs
  // (how many, and their bytes per sample together).
  int32_t tp_fwd_collectives = 0;
  int32_t tp_bwd_collectives = 0;
  double tp_fwd_bytes_per_sample = 0;
  double tp_bwd_bytes_per_sample = 0;
  // Of the BWD's, those that run under its weight-gradient GEMMs
  // (training.tensor_parallel_grad_overlap): how many, their bytes per sample (as
  // all-reduces), the share of the BWD's compute those GEMMs take, the lead they start with
  // (Instruction::lead_s), and whether they are sequence parallelism's reduce-scatter +
  // all-gather pairs, of which only the reduce-scatters hide.
  int32_t tp_bwd_hidden_collectives = 0;
  double tp_bwd_hidden_bytes_per_sample = 0;
  double tp_bwd_hidden_share = 0;
  bool tp_bwd_hidden_in_pairs = false;
  // Expert parallelism: the all-to-alls of one FWD and one BWD among the stage's expert group
  // (how many, and their bytes per sample together).
  int32_t ep_fwd_all_to_alls = 0;
  int32_t ep_bwd_all_to_alls = 0;
  double ep_fwd_bytes_per_sample = 0;
  double ep_bwd_bytes_per_sample = 0;
  // Context parallelism (sim/schedule/context_parallel.h): the layers with attention, one
  // GPU's buffers of a pass's exchanges per sample (whole-sequence keys and values of its
  // tensor-parallel share; Ulysses' all-to-all send buffers), and the attention's share of
  // a forward's and a backward's compute, under which a ring runs.
  int32_t cp_layers = 0;
  double cp_kv_bytes_per_sample = 0;
  double cp_qkvo_bytes_per_sample = 0;
  double cp_fwd_attention_share = 0;
  double cp_bwd_attention_share = 0;
};

// One pipeline, replicated `replicas` times for data parallelism: replica r runs stage
// s on device stage_device[s] + r * devices_per_replica and takes the r-th slice of
// global_batch / replicas samples.
struct PipelineLayout {
  int32_t num_devices = 0;
  int32_t global_batch = 0;
  int32_t replicas = 1;
  int32_t devices_per_replica = 0;
  // Expert parallelism, folded (training.expert_tensor_parallel; sim/spec/expert_folding.h):
  // an expert group of expert_parallel x expert_tensor_parallel GPUs spans
  // `expert_group_replicas` consecutive replicas, or a part of one replica's tensor x context
  // GPUs (expert_runs()); replicas r with the same r mod expert_group_replicas (and the same
  // place in their group) hold the same experts, `expert_data_parallel` GPUs in all.
  int32_t expert_parallel = 1;
  int32_t expert_group_replicas = 1;
  int32_t expert_data_parallel = 1;
  int32_t expert_tensor_parallel = 1;
  // The GPUs each device of the layout stands for: tensor_parallel x context_parallel, those
  // of context parallelism splitting each sequence, holding the same weights and reducing their
  // gradients together with the replicas'.
  int32_t tensor_parallel = 1;
  int32_t context_parallel = 1;
  ExpertGroupRuns expert_runs() const {
    return expert_group_runs(expert_parallel, expert_tensor_parallel, tensor_parallel,
                             context_parallel);
  }
  // ZeRO's all-gathers of weights move this many bytes per byte of gradient reduced: 1 in the
  // 16-bit formats, less when the weights are gathered in a low-precision format
  // (training.fp8_param_gather: 1/2 for FP8).
  double weight_gather_bytes_per_gradient_byte = 1;
  std::vector<int32_t> stage_device;  // replica 0
  // Per stage, replica 0's partition of its slice for the forward and for the backward,
  // sorted by sample.
  // Equal microbatches give every stage the same ranges; UMPIPE gives each its own.
  std::vector<std::vector<SampleRange>> fwd_ranges;
  std::vector<std::vector<SampleRange>> bwd_ranges;
  std::vector<StageCost> costs;
  std::vector<int64_t> static_bytes;  // per device
  // Activation offload: per stage, the fraction of each FWD's stash that goes to host
  // memory (0: none; empty: no offload), and how many of the stage's backwards ahead a
  // RELOAD is issued.
  std::vector<double> offload_fraction;
  int32_t prefetch_horizon = 2;
  // Asynchronous pipelines: per stage, whether stashed weight versions go to host memory
  // (empty: none).
  std::vector<bool> offload_weight_stashes;
  // Replicated stages (schedule.stage_replicas; one pipeline): per stage, how many devices
  // run it, from stage_device[s] on (empty: one each). Replica k of stage s takes the
  // stage's microbatches j with j mod stage_replicas[s] = k, j counted per iteration by
  // `lower` and over the run by `lower_run`; transfers go between the replicas that own
  // the microbatch, and each update waits for an ALLREDUCE among the stage's replicas.
  std::vector<int32_t> stage_replicas;
  // DualPipe: per stage, the model stage whose weights it holds (Program::model_stage);
  // stages holding the same weights all-reduce their gradients before their updates, and
  // each covers its own part of the batch. Empty: stage s holds model stage s.
  std::vector<int32_t> model_stage;
};

// Every device that runs stage s: its replicas, in each data-parallel pipeline.
std::vector<int32_t> stage_devices(const PipelineLayout& layout, int32_t stage);

// Each replica's microbatches are numbered after the previous replica's, so that
// (stage, microbatch) names one action. Every iteration ends with an OPTIM per stage on
// every device that runs it; with replicas, each waits for an ALLREDUCE of the stage's
// gradients across them.
//
// `production_times` (optional: per device, one entry per action of `order`) is when the
// schedule expects each action's output to be ready. With it, every recv lane takes its
// transfers in the order their data is produced instead of the order it is consumed: a
// schedule whose devices consume in another order than their neighbours produce (ZB-V,
// where two chunks of a device talk to the same neighbour) then cannot deadlock on a
// rendezvous (lowering_transfers.h). Offload: lowering_offload.h.
using ProductionTimes = std::vector<std::vector<double>>;
Program lower(const PipelineLayout& layout, const ComputeOrder& order, int32_t iterations,
              const ProductionTimes& production_times = {});

// Asynchronous pipelines: each device's compute order spanning the run with its OPTIMs in
// place (async_order.h), the same on every replica. An OPTIM waits for the BWD it follows,
// with replicas through an ALLREDUCE of the stage's gradients across them; with
// update_every_microbatch it covers that microbatch's samples. Activation offload works as
// in `lower`, over the whole run, and stashed weight versions may go to host memory too
// (lowering_offload.h).
Program lower_run(const PipelineLayout& layout, const RunOrder& run, int32_t iterations,
                  bool update_every_microbatch);

}  // namespace pipetwin
