#include "sim/scenario/resolve_training.h"

#include <algorithm>
#include <cmath>

#include "sim/model/expert_parallel.h"
#include "sim/model/number_format.h"
#include "sim/scenario/resolve_model.h"
#include "sim/spec/expert_folding.h"

namespace pipetwin {

namespace {

// Megatron-Core's default bucket (DistributedDataParallelConfig.bucket_size): max(40M, 1M x DP)
// parameters, so that buckets grow with the ring they cross; their gradients in the training
// precision's word.
int64_t megatron_bucket_bytes(const proto::Training& t) {
  const double parameters = std::max(40e6, 1e6 * t.data_parallel());
  const double word = t.precision() == proto::FP32 && !t.mixed_precision() ? 4 : 2;
  return std::llround(parameters * word);
}

// MoE parallel folding (sim/spec/expert_folding.h).
void check_expert_folding(const ScenarioChecker& check, const proto::Training& t, int64_t etp) {
  const int64_t ep = t.expert_parallel(), tp = t.tensor_parallel(), cp = t.context_parallel();
  const int64_t block = tp * cp, gpus = block * t.data_parallel();
  const ExpertFoldingFit folding = expert_folding(ep, etp, tp, cp, t.data_parallel());
  if (folding == ExpertFoldingFit::kDoesNotDivide) {
    check.fail("training.expert_parallel",
               std::to_string(ep) + " x " + std::to_string(etp) +
                   " GPUs per expert group (expert x expert tensor parallel) must divide the " +
                   std::to_string(gpus) +
                   " GPUs of a stage (tensor x context x data parallel) they are folded over");
  }
  if (folding == ExpertFoldingFit::kStraddles) {
    check.fail("training.expert_parallel",
               std::to_string(ep) + " x " + std::to_string(etp) +
                   " GPUs per expert group (expert x expert tensor parallel) must tile the " +
                   std::to_string(tp) + " x " + std::to_string(cp) +
                   " tensor x context-parallel GPUs of a replica's stage: a divisor of the " +
                   std::to_string(tp) +
                   " tensor ranks, or whole tensor ranks over a divisor of the context ranks, "
                   "or a multiple of the " +
                   std::to_string(block) + " GPUs");
  }
}

}  // namespace

TrainingSpec resolve_training(const ScenarioChecker& check, const proto::Scenario& s) {
  check.require(s.has_training(), "training");
  const proto::Training& t = s.training();
  check.positive(t.has_global_batch(), t.global_batch(), "training.global_batch");
  check.positive(t.has_microbatches(), t.microbatches(), "training.microbatches");
  check.positive(true, t.iterations(), "training.iterations");
  if (t.microbatches() > t.global_batch()) {
    check.fail("training.microbatches", std::to_string(t.microbatches()) +
                                            " microbatches cannot split a batch of " +
                                            std::to_string(t.global_batch()) + " samples");
  }
  check.positive(true, t.data_parallel(), "training.data_parallel");
  if (t.global_batch() % t.data_parallel() != 0) {
    check.fail("training.data_parallel", "the batch of " + std::to_string(t.global_batch()) +
                                             " samples does not split into " +
                                             std::to_string(t.data_parallel()) + " equal replicas");
  }
  if (t.microbatches() > t.global_batch() / t.data_parallel()) {
    check.fail("training.microbatches",
               std::to_string(t.microbatches()) + " microbatches cannot split a replica's " +
                   std::to_string(t.global_batch() / t.data_parallel()) + " samples");
  }
  const char* peak_field = format_peak_field(t.precision());
  const double format_peak = format_peak_flops(s.cluster().gpu(), t.precision());
  if (peak_field != nullptr && !(format_peak > 0)) {
    check.fail("training.precision",
               proto::Precision_Name(t.precision()) + " needs tensor cores for it: the GPU (" +
                   (s.cluster().gpu().has_name() ? s.cluster().gpu().name() : "cluster.gpu") +
                   ") has no cluster.gpu." + peak_field);
  }
  const bool low_precision = number_format(t.precision(), t.fp8_scaling()).low_precision;
  if (t.fp8_param_gather() && (!low_precision || t.zero_stage() == 0)) {
    check.fail("training.fp8_param_gather",
               "keeps the weights in a low-precision training.precision (FP8, FP8_BLOCKWISE, "
               "MXFP8, NVFP4) and gathers them sharded: it needs one and a training.zero_stage");
  }
  if (t.fp8_dispatch() && !low_precision) {
    check.fail("training.fp8_dispatch",
               "sends tokens in the low-precision training.precision: set FP8, FP8_BLOCKWISE, "
               "MXFP8 or NVFP4");
  }
  if (t.mixed_precision() && t.precision() == proto::FP32) {
    check.fail("training.mixed_precision",
               "needs a 16-bit training.precision (FP16 or BF16) next to the fp32 master weights");
  }
  check.positive(true, t.tensor_parallel(), "training.tensor_parallel");
  if (t.sequence_parallel() && t.tensor_parallel() == 1) {
    check.fail("training.sequence_parallel",
               "splits activations among tensor-parallel GPUs: "
               "set training.tensor_parallel above 1");
  }
  check.positive(true, t.expert_parallel(), "training.expert_parallel");
  check.positive(true, t.context_parallel(), "training.context_parallel");
  // Without expert parallelism the experts split like the dense MLP, whatever ETP says.
  const int32_t etp = t.has_expert_tensor_parallel() && t.expert_parallel() > 1
                          ? t.expert_tensor_parallel()
                          : t.tensor_parallel();
  if (etp != 1 && etp != t.tensor_parallel()) {
    check.fail("training.expert_tensor_parallel",
               "splits each expert's width over 1 GPU or over the stage's " +
                   std::to_string(t.tensor_parallel()) +
                   " tensor-parallel GPUs (training.tensor_parallel); " + std::to_string(etp) +
                   " is neither");
  }
  check_expert_folding(check, t, etp);
  // Up to 1 TiB: a bucket is a slice of one stage's gradients.
  if (!(t.grad_bucket_mb() >= 0 && t.grad_bucket_mb() <= 1 << 20)) {
    check.fail("training.grad_bucket_mb",
               "must be between 0 (one reduction after the backward) and 1048576 MiB");
  }
  TrainingSpec spec{t.global_batch(),
                    t.microbatches(),
                    t.iterations(),
                    t.optimizer(),
                    t.data_parallel(),
                    t.precision(),
                    t.mixed_precision() || low_precision,  // the formats keep fp32 master weights
                    t.tensor_parallel(),
                    t.sequence_parallel(),
                    t.recompute(),
                    t.expert_parallel(),
                    t.zero_stage(),
                    t.has_grad_bucket_mb() ? std::llround(t.grad_bucket_mb() * (1 << 20))
                                           : megatron_bucket_bytes(t),
                    t.context_parallel(),
                    t.context_parallel_algorithm(),
                    t.tensor_parallel_grad_overlap(),
                    t.grad_reduce_after_flush(),
                    t.fp8_scaling(),
                    t.fp8_param_gather(),
                    t.fp8_dispatch(),
                    peak_field != nullptr ? format_peak : 0};
  spec.buckets_first_chunk_only = !t.has_grad_bucket_mb();
  spec.expert_tensor_parallel = etp;
  spec.overlap_moe_expert_parallel_comm = t.overlap_moe_expert_parallel_comm();
  spec.fsdp_reshard = t.fsdp_reshard();
  spec.fsdp_shard_size = t.fsdp_shard_size();
  return spec;
}

void check_reduce_after_flush(const ScenarioChecker& check, const ResolvedScenario& setup) {
  const TrainingSpec& t = setup.training;
  if (!t.grad_reduce_after_flush) return;
  if (t.grad_bucket_bytes > 0 || t.zero_stage > 1) {
    check.fail("training.grad_reduce_after_flush",
               "reduces each chunk's gradients in one block after the flush: it needs "
               "training.grad_bucket_mb 0 and a ZeRO stage of 0 or 1 (stages 2 and 3 "
               "scatter the gradients after every backward)");
  }
  if (is_asynchronous(setup.schedule.kind)) {
    check.fail("training.grad_reduce_after_flush",
               "waits for the pipeline flush, which asynchronous pipelines do not have");
  }
}

namespace {

// FSDP's options act on ZeRO's shards: how long stage 3 keeps gathered weights, and shard
// groups that tile the data-parallel replicas.
void check_fsdp_options(const ScenarioChecker& check, const TrainingSpec& t) {
  if (t.fsdp_reshard != proto::Training::AFTER_EACH_PASS && t.zero_stage != 3) {
    check.fail("training.fsdp_reshard",
               "says how long ZeRO-3's gathered weights stay whole: it needs training.zero_stage: "
               "3 (FSDP)");
  }
  if (t.fsdp_shard_size == 0) return;
  if (t.zero_stage == 0) {
    check.fail("training.fsdp_shard_size", "shards ZeRO's state: it needs a training.zero_stage");
  }
  const int32_t replicas = t.data_parallel * t.context_parallel;
  if (t.fsdp_shard_size < 1 || replicas % t.fsdp_shard_size != 0) {
    check.fail("training.fsdp_shard_size",
               std::to_string(t.fsdp_shard_size) + " must divide the " + std::to_string(replicas) +
                   " data-parallel x context-parallel GPUs that share each weight (0: all)");
  }
  if (t.context_parallel > 1) {
    check.fail("training.fsdp_shard_size",
               "hybrid sharding is simulated over data-parallel replicas only: not with "
               "training.context_parallel");
  }
  if (t.expert_parallel > 1 && t.expert_data_parallel() > t.data_parallel) {
    check.fail("training.fsdp_shard_size",
               "hybrid sharding is simulated over data-parallel replicas only: not with expert "
               "groups inside a replica (training.expert_parallel " +
                   std::to_string(t.expert_parallel) + " x " + std::to_string(t.expert_tensor()) +
                   " GPUs, fewer than the replica's " +
                   std::to_string(t.tensor_parallel * t.context_parallel) +
                   " tensor x context-parallel GPUs)");
  }
}

}  // namespace

void check_zero_stage(const ScenarioChecker& check, const ResolvedScenario& setup) {
  check_fsdp_options(check, setup.training);
  const int32_t stage = setup.training.zero_stage;
  if (stage == 0) return;
  const proto::ScheduleKind kind = setup.schedule.kind;
  // Each of these keeps or moves whole weight versions per device, which a shard is not.
  // DualPipe's two copies of each stage reduce their gradients together: ZeRO-1 scatters
  // that reduction and gathers the updated weights, as DeepSeek-V3 trains.
  if (is_asynchronous(kind) || kind == proto::PIPEFB || (kind == proto::DUALPIPE && stage > 1) ||
      !setup.schedule.stage_replicas.empty() || setup.freeze.enabled) {
    check.fail("training.zero_stage",
               "shards the state of identical data-parallel replicas: not with asynchronous "
               "pipelines, PIPEFB, DUALPIPE above stage 1, replicated stages "
               "(schedule.stage_replicas) or freeze");
  }
  if (stage == 3 && setup.schedule.offload.enabled) {
    check.fail("training.zero_stage",
               "stage 3 gathers each layer's weights around its passes; with schedule.offload "
               "pipetwin does not simulate both (use stage 1 or 2)");
  }
}

void check_context_parallel(const ScenarioChecker& check, const ResolvedScenario& setup) {
  const int32_t cp = setup.training.context_parallel;
  if (cp <= 1) return;
  const bool attention =
      std::any_of(setup.model.layers.begin(), setup.model.layers.end(),
                  [](const ModelLayer& l) { return l.cp_kv_bytes_per_sample > 0; });
  if (!attention || !setup.zoo) {
    check.fail("training.context_parallel",
               "splits the sequences of attention layers: it needs a zoo transformer or gpt "
               "(model.zoo or model.hf_config)");
  }
  const int64_t seq = setup.zoo->seq_len();
  if (seq % (2 * int64_t{cp}) != 0) {
    check.fail("training.context_parallel",
               std::to_string(cp) + " GPUs per sequence need model.zoo.seq_len (" +
                   std::to_string(seq) + ") to split into " + std::to_string(2 * cp) +
                   " equal chunks (two per GPU, for causal load balance)");
  }
  const int64_t tp = setup.training.tensor_parallel;
  if (setup.training.context_parallel_algorithm == proto::Training::ULYSSES &&
      setup.zoo->heads() % (tp * cp) != 0) {
    check.fail("training.context_parallel_algorithm",
               "ULYSSES gives each GPU whole attention heads: " + std::to_string(tp * cp) +
                   " GPUs (tensor x context parallel) must divide the " +
                   std::to_string(setup.zoo->heads()) + " heads");
  }
  const proto::ScheduleKind kind = setup.schedule.kind;
  if (is_asynchronous(kind) || kind == proto::PIPEFB || !setup.schedule.stage_replicas.empty() ||
      setup.freeze.enabled) {
    check.fail("training.context_parallel",
               "is simulated with synchronous pipelines of one device per stage: not with "
               "asynchronous pipelines, PIPEFB, replicated stages (schedule.stage_replicas) or "
               "freeze");
  }
}

void check_tensor_parallel(const ScenarioChecker& check, const proto::Scenario& s,
                           const ResolvedScenario& setup) {
  const int32_t tp = setup.training.tensor_parallel;
  if (tp <= 1) return;
  const bool splits = std::any_of(
      setup.model.layers.begin(), setup.model.layers.end(),
      [](const ModelLayer& l) { return l.tp_fwd_collectives + l.tp_bwd_collectives > 0; });
  if (s.model().zoo().name() == "mlp") {
    if (setup.model.layers.size() % 2 != 0) {
      check.fail("training.tensor_parallel",
                 "an MLP splits in pairs of layers (column-, then row-parallel): model.zoo.layers "
                 "must be even");
    }
    if (s.model().zoo().hidden() % tp != 0) {
      check.fail("training.tensor_parallel",
                 "the MLP's " + std::to_string(s.model().zoo().hidden()) +
                     " hidden units do not split " + std::to_string(tp) + " ways");
    }
    if (setup.training.sequence_parallel) {
      check.fail("training.sequence_parallel", "an MLP has no sequence to split");
    }
  }
  if (!splits) {
    check.fail("training.tensor_parallel",
               "only transformer and MLP layers split across GPUs (model.zoo.name: gpt or mlp)");
  }
  const int32_t nvlink_gpus = setup.cluster.gpus_per_node * setup.cluster.nvlink_domain_nodes;
  if (nvlink_gpus % tp != 0) {
    check.fail("training.tensor_parallel",
               std::to_string(tp) + " GPUs per stage must divide the NVLink domain's " +
                   std::to_string(nvlink_gpus) +
                   " (a stage's all-reduces stay on the intra-node fabric)");
  }
  if (s.model().zoo().heads() % tp != 0) {
    check.fail("training.tensor_parallel", "the " + std::to_string(s.model().zoo().heads()) +
                                               " attention heads do not split " +
                                               std::to_string(tp) + " ways");
  }
  if (setup.freeze.enabled || setup.schedule.kind == proto::PIPEFB) {
    check.fail("training.tensor_parallel",
               "not with FreezePipe or PIPEFB, which place stages on devices themselves");
  }
}

void add_expert_parallel(const ScenarioChecker& check, const proto::Scenario& s,
                         ResolvedScenario& setup) {
  const int32_t ep = setup.training.expert_parallel;
  int32_t experts = 0;
  for (const ModelLayer& l : setup.model.layers) experts = std::max(experts, l.moe.experts);
  if (experts == 0) {
    if (ep > 1) {
      check.fail("training.expert_parallel",
                 "spreads the experts of mixture-of-experts layers; this model has none "
                 "(model.zoo.moe)");
    }
    return;
  }
  if (experts % ep != 0) {
    check.fail("training.expert_parallel", "the " + std::to_string(experts) +
                                               " experts of each layer do not split over " +
                                               std::to_string(ep) + " GPUs");
  }
  if (ep > 1 && (is_asynchronous(setup.schedule.kind) || setup.schedule.kind == proto::PIPEFB ||
                 !setup.schedule.stage_replicas.empty())) {
    check.fail("training.expert_parallel",
               "expert parallelism runs with the synchronous schedules on one device per stage "
               "(not asynchronous, PIPEFB or replicated stages)");
  }
  const proto::ScheduleKind kind = setup.schedule.kind;
  // Without expert parallelism there is nothing to overlap, and the flag changes nothing.
  if (setup.training.overlap_moe_expert_parallel_comm && ep > 1 && kind != proto::ONE_F_ONE_B &&
      kind != proto::INTERLEAVED_ONE_F_ONE_B) {
    check.fail("training.overlap_moe_expert_parallel_comm",
               "overlaps expert all-to-alls in the steady state of ONE_F_ONE_B or "
               "INTERLEAVED_ONE_F_ONE_B (DUALPIPE does by itself): not with " +
                   proto::ScheduleKind_Name(kind));
  }
  const proto::Moe& moe = s.model().zoo().moe();
  if (moe.max_nodes_per_token() < 0) {
    check.fail("model.zoo.moe.max_nodes_per_token", "must be 0 (no limit) or more");
  }
  if (moe.max_nodes_per_token() > 0 && moe.dispatcher() != proto::Moe::DEEPEP &&
      moe.dispatcher() != proto::Moe::HYBRIDEP) {
    check.fail("model.zoo.moe.max_nodes_per_token",
               "limits the nodes DEEPEP or HYBRIDEP sends a token to: set "
               "model.zoo.moe.dispatcher to one of them");
  }
  switch (moe.dispatcher()) {
    case proto::Moe::DEEPEP:
    case proto::Moe::HYBRIDEP:
      setup.expert_dispatch.kind = ExpertDispatch::Kind::kDeepEp;
      break;
    case proto::Moe::ALLGATHER:
      setup.expert_dispatch.kind = ExpertDispatch::Kind::kAllGather;
      break;
    default:
      setup.expert_dispatch.kind = ExpertDispatch::Kind::kAllToAll;
  }
  setup.expert_dispatch.experts = experts;
  for (const ModelLayer& l : setup.model.layers) {
    if (l.moe.experts > 0) setup.expert_dispatch.top_k = l.moe.top_k;
  }
  setup.expert_dispatch.max_nodes_per_token = moe.max_nodes_per_token();
  apply_expert_parallel(setup.model, ep, setup.training.tensor_parallel,
                        setup.training.expert_tensor(), s.model().zoo().utilization_half_batch(),
                        setup.expert_dispatch.kind != ExpertDispatch::Kind::kAllGather);
  // A memory-bound kernel: counted where the zoo's are (add_memory_bound_kernels, which has
  // checked the efficiency and the bandwidth by now), at their bandwidth.
  if (setup.expert_dispatch.kind == ExpertDispatch::Kind::kAllToAll &&
      counts_memory_bound_kernels(s)) {
    add_local_expert_sort(setup.model, ep, setup.training.tensor_parallel,
                          setup.training.expert_tensor(),
                          s.model().zoo().memory_efficiency() *
                              s.cluster().gpu().memory_bandwidth_gbytes_per_s() * 1e9);
  }
}

void place_ranks(const ScenarioChecker& check, const proto::Scenario& s, ResolvedScenario& setup) {
  if (s.training().rank_order() != proto::Training::TP_CP_EP_DP_PP) return;
  if (!setup.schedule.stage_replicas.empty() || setup.schedule.kind == proto::PIPEFB ||
      setup.freeze.enabled) {
    check.fail("training.rank_order",
               "places tensor, context, data and pipeline groups; not with replicated stages "
               "(schedule.stage_replicas), PIPEFB or freeze, which place stages themselves");
  }
  const TrainingSpec& t = setup.training;
  const int64_t tp = t.tensor_parallel, cp = t.context_parallel, pp = setup.schedule.stages,
                dp = t.data_parallel, g = setup.cluster.gpus_per_node;
  const int64_t used = tp * cp * pp * dp;
  if (used > static_cast<int64_t>(setup.cluster.devices.size())) return;  // reported elsewhere
  // Device d is (tp, cp, stage, replica), tensor innermost; Megatron-Core's rank of the same
  // GPU puts the replica before the stage.
  for (int64_t d = 0; d < used; ++d) {
    const int64_t inner = d % (tp * cp), stage = d / (tp * cp) % pp, replica = d / (tp * cp * pp);
    const int64_t rank = inner + tp * cp * (replica + dp * stage);
    DeviceSpec& device = setup.cluster.devices[d];
    device.node = static_cast<int>(rank / g);
    device.slot = static_cast<int>(rank % g);
  }
}

}  // namespace pipetwin
