// A validated scenario, resolved into the types the scheduler and executors use.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario.pb.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/expert_dispatch.h"
#include "sim/spec/expert_folding.h"
#include "sim/spec/freeze_spec.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/unequal_plan.h"

namespace pipetwin {

struct TrainingSpec {
  int32_t global_batch = 0;
  int32_t microbatches = 0;
  int32_t iterations = 1;
  proto::Optimizer optimizer = proto::ADAM;
  int32_t data_parallel = 1;  // pipeline replicas; global_batch is split among them
  proto::Precision precision = proto::FP32;
  bool mixed_precision = false;  // fp32 master weights and optimizer state
  int32_t tensor_parallel = 1;   // GPUs per stage (Megatron-LM), tp innermost
  bool sequence_parallel = false;
  proto::Training::Recompute recompute = proto::Training::NONE;  // of transformer blocks
  // GPUs per expert group (sim/model/expert_parallel.h)
  int32_t expert_parallel = 1;
  // ZeRO stage 0-3 (training.zero_stage): how much of each parameter's state a
  // data-parallel replica keeps 1/N of (sim/model/training_memory.h)
  int32_t zero_stage = 0;
  // Gradient buckets of this many bytes, each reduced under the backward that fills it
  // (training.grad_bucket_mb; sim/schedule/gradient_buckets.h); 0: one block at its end
  int64_t grad_bucket_bytes = 0;
  // GPUs that split each sequence (training.context_parallel; sim/schedule/context_parallel.h),
  // between tensor and pipeline parallelism in the rank order
  int32_t context_parallel = 1;
  proto::Training::ContextParallelAlgorithm context_parallel_algorithm = proto::Training::RING;
  // Backward tensor-parallel collectives under the weight-gradient GEMMs
  // (training.tensor_parallel_grad_overlap; sim/schedule/tensor_parallel.h)
  bool tensor_parallel_grad_overlap = false;
  // Every chunk's gradient reduction after the device's last backward
  // (training.grad_reduce_after_flush; sim/schedule/reduce_after_flush.h)
  bool grad_reduce_after_flush = false;
  // Low-precision formats (sim/model/number_format.h): how FP8 finds its scales, whether the
  // weights are kept and gathered only in the format, whether expert dispatch sends it, and
  // the GPU's peak in the format (0 for the 16- and 32-bit ones, which run at peak_flops).
  proto::Training::Fp8Scaling fp8_scaling = proto::Training::CURRENT;
  bool fp8_param_gather = false;
  bool fp8_dispatch = false;
  double format_peak_flops = 0;
  // Megatron-Core's default (training.grad_bucket_mb unset): only each device's first model
  // chunk reduces in buckets, its further virtual chunks in one block each.
  bool buckets_first_chunk_only = false;
  // GPUs that split each expert's width (training.expert_tensor_parallel): 1 or
  // tensor_parallel; 0 stands for tensor_parallel.
  int32_t expert_tensor_parallel = 0;
  // ZeRO-3 / FSDP: how long gathered weights stay whole (training.fsdp_reshard), and the
  // replicas of one shard group under hybrid sharding (training.fsdp_shard_size; 0: all);
  // sim/schedule/sharded_data_parallel.h.
  proto::Training::FsdpReshard fsdp_reshard = proto::Training::AFTER_EACH_PASS;
  int32_t fsdp_shard_size = 0;
  // Expert all-to-alls under the next pass of the other direction
  // (training.overlap_moe_expert_parallel_comm; sim/schedule/expert_all_to_all.h)
  bool overlap_moe_expert_parallel_comm = false;
  int32_t expert_tensor() const {
    return expert_tensor_parallel > 0 ? expert_tensor_parallel : tensor_parallel;
  }

  // MoE parallel folding (Megatron-Core): the experts' ETP x EP x EDP cover the tensor x
  // context x data-parallel GPUs of a stage. The expert-data-parallel group: the GPUs holding
  // the same experts.
  int32_t expert_data_parallel() const {
    return tensor_parallel * context_parallel * data_parallel / (expert_parallel * expert_tensor());
  }
  // The data-parallel replicas one expert group (EP x ETP GPUs) spans.
  int32_t expert_group_replicas() const {
    return std::max(1, expert_parallel * expert_tensor() / (tensor_parallel * context_parallel));
  }
  // The runs of a replica's tensor and context ranks in one expert group.
  ExpertGroupRuns expert_runs() const {
    return expert_group_runs(expert_parallel, expert_tensor(), tensor_parallel, context_parallel);
  }
};

// Offload to host memory (schedule.offload). `stages` holds the policy's choice: every stage
// for ALL, the listed ones for STAGES, all candidates for SELECTIVE (which the scheduler
// then narrows down).
struct OffloadSpec {
  bool enabled = false;
  proto::Offload::Policy policy = proto::Offload::ALL;
  std::vector<int32_t> stages;
  int32_t prefetch_horizon = 2;
  double fraction = 1.0;  // of each activation stash
  bool activations = true;
  bool weight_stashes = false;  // asynchronous pipelines' stashed weight versions
};

// PIPEDREAM_ASYNC, PIPEDREAM_2BW, APAPO: no flush between iterations.
inline bool is_asynchronous(proto::ScheduleKind kind) {
  return kind == proto::PIPEDREAM_ASYNC || kind == proto::PIPEDREAM_2BW || kind == proto::APAPO;
}
// Zero-bubble pipelines split every backward into BWD_INPUT and BWD_WEIGHT.
inline bool is_zero_bubble(proto::ScheduleKind kind) {
  return kind == proto::ZB_H1 || kind == proto::ZB_H2 || kind == proto::ZB_V ||
         kind == proto::ZB_AUTO || kind == proto::DUALPIPE;
}

struct ScheduleSpec {
  proto::ScheduleKind kind = proto::GPIPE;
  int32_t stages = 0;              // pipeline devices
  int32_t virtual_stages = 1;      // model chunks per device
  std::vector<int32_t> partition;  // layers per chunk; empty = balance by time
  UnequalPlan stage_plans;         // UMPIPE: each stage's forward and backward cuts
  OffloadSpec offload;
  bool pipefb_recompute = false;         // PIPEFB: send the input, recompute the forward
  bool comm_overlap = true;              // false: transfers block the compute lane
  int32_t max_in_flight_iterations = 2;  // APAPO's micro-batch control
  int32_t max_staleness = 0;
  // Per stage, the devices that run it (schedule.stage_replicas); empty: one each.
  std::vector<int32_t> stage_replicas;
  // ZB_AUTO: each stage's activation stashes within this many of its microbatches' (0:
  // 1F1B's first stage, `stages`).
  double memory_limit_microbatches = 0;

  int32_t chunks() const { return stages * virtual_stages; }
};

struct SimgridSettings {
  bool exact = false;
  bool collective_steps = false;  // ring collectives round by round (simgrid.collective_steps)
  // Extra SimGrid --cfg settings ("network/model:LV08"), applied last.
  std::vector<std::string> cfg;
};

struct ResolvedScenario {
  std::string name;
  ClusterSpec cluster;
  ModelSpec model;
  TrainingSpec training;
  ScheduleSpec schedule;
  SimgridSettings simgrid;
  FreezeSpec freeze;
  // The zoo architecture, when the model is one: real backends build it as modules.
  std::optional<proto::Zoo> zoo;
  // How expert groups move their tokens (model.zoo.moe.dispatcher).
  ExpertDispatch expert_dispatch;
};

}  // namespace pipetwin
