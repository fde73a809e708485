#include "sim/tune/replica_passes.h"

#include <algorithm>
#include <cmath>

#include "sim/driver/build_program.h"
#include "sim/network/expert_exchange.h"
#include "sim/network/network_model.h"
#include "sim/schedule/gradient_buckets.h"
#include "sim/tune/gradient_reductions.h"

namespace pipetwin {
namespace {

// What a pass of `compute_s` waits for beyond its compute on a GPU of its stage.
// A BWD's tensor-parallel collectives may partly run under its weight gradients
// (tensor_hidden_s, under its last tensor_hidden_share; sim/schedule/tensor_parallel.h); a
// split backward's (`hides` false) follow it whole.
struct PassCollectives {
  double tensor_s = 0, expert_s = 0, context_s = 0, context_lead_share = 0;
  double tensor_hidden_s = 0, tensor_hidden_share = 0;
  double extra(double compute_s, bool hides = true) const {
    const double hidden =
        hides ? std::max(0.0, tensor_hidden_s - tensor_hidden_share * compute_s) : tensor_hidden_s;
    return std::max(0.0, context_s - context_lead_share * compute_s) + expert_s + tensor_s + hidden;
  }
};

PassCollectives pass_collectives(const ResolvedScenario& setup, const StageCost& cost,
                                 const GpuNumbering& gpus, int32_t device, double samples,
                                 bool forward) {
  const TrainingSpec& training = setup.training;
  PassCollectives p;
  if (training.tensor_parallel > 1) {
    const std::vector<int32_t> group = gpus.tensor_group(device);
    double bytes = forward ? cost.tp_fwd_bytes_per_sample : cost.tp_bwd_bytes_per_sample;
    int32_t count = forward ? cost.tp_fwd_collectives : cost.tp_bwd_collectives;
    // As the Program holds them (sim/schedule/tensor_parallel.h): a zero-bubble input gradient
    // runs its collectives as one block, a whole backward hides some under its weight gradients.
    if (!forward && cost.tp_bwd_hidden_collectives > 0 && !is_zero_bubble(setup.schedule.kind)) {
      const double hidden = cost.tp_bwd_hidden_bytes_per_sample * samples;
      const int32_t n = cost.tp_bwd_hidden_collectives;
      p.tensor_hidden_share = cost.tp_bwd_hidden_share;
      if (cost.tp_bwd_hidden_in_pairs) {
        p.tensor_hidden_s = collective_time(setup, kProgramReduceScatter, group, hidden, n);
        p.tensor_s += collective_time(setup, kProgramAllGather, group, hidden, n);
      } else {
        p.tensor_hidden_s = collective_time(setup, kProgramAllReduce, group, hidden, n);
      }
      bytes -= cost.tp_bwd_hidden_bytes_per_sample;
      count -= n;
    }
    p.tensor_s += collective_time(setup, kProgramAllReduce, group, bytes * samples, count);
  }
  if (training.expert_parallel > 1) {
    const std::vector<int32_t> group =
        gpus.expert_group(device, training.expert_group_replicas(), training.expert_runs());
    const double bytes =
        (forward ? cost.ep_fwd_bytes_per_sample : cost.ep_bwd_bytes_per_sample) * samples;
    const int32_t count = forward ? cost.ep_fwd_all_to_alls : cost.ep_bwd_all_to_alls;
    if (group.size() > 1 && bytes > 0 && count > 0) {
      p.expert_s = expert_exchange_seconds(setup.cluster, group, std::llround(bytes), count,
                                           setup.expert_dispatch);
    }
  }
  if (training.context_parallel > 1 && cost.cp_layers > 0) {
    const std::vector<int32_t> group = gpus.context_group(device);
    if (training.context_parallel_algorithm == proto::Training::ULYSSES) {
      p.context_s = collective_time(setup, kProgramAllToAll, group,
                                    cost.cp_qkvo_bytes_per_sample * samples, 2 * cost.cp_layers);
    } else {
      const double kv = cost.cp_kv_bytes_per_sample * samples;
      p.context_s = collective_time(setup, kProgramAllGather, group, kv, cost.cp_layers);
      if (!forward) {
        p.context_s += collective_time(setup, kProgramReduceScatter, group, kv, cost.cp_layers);
      }
      if (training.context_parallel_algorithm == proto::Training::RING) {
        p.context_lead_share = forward ? cost.cp_fwd_attention_share : cost.cp_bwd_attention_share;
      }
    }
  }
  return p;
}

// ZeRO on the data-parallel lane (sim/schedule/sharded_data_parallel.h): over each of the
// stage's reductions, stage 3's gathers of a pass's first layer and of the rest, and stages 2
// and 3's reduce-scatter after every pass that computes weight gradients, in buckets no finer
// than a layer's gradients (sim/schedule/gradient_buckets.h).
void add_sharded_data_parallel(const ResolvedScenario& setup, const StageCost& cost,
                               const GpuNumbering& gpus, int32_t device, ChunkPassTimes& t) {
  const TrainingSpec& training = setup.training;
  if (training.zero_stage < 2) return;
  for (const Reduction& r : reductions_of(setup, cost, gpus, {device})) {
    if (training.zero_stage == 3 && cost.weight_bytes > 0) {
      const auto gathers = [&](int64_t first_layer, double& first_s, double& rest_s) {
        const int64_t head = std::llround(static_cast<double>(r.bytes) * first_layer /
                                          static_cast<double>(cost.weight_bytes));
        first_s += collective_time(setup, kProgramAllGather, r.group, head, 1);
        if (cost.layers > 1) {
          rest_s +=
              collective_time(setup, kProgramAllGather, r.group, r.bytes - head, cost.layers - 1);
        }
      };
      gathers(cost.first_layer_weight_bytes, t.fwd_gather_first_s, t.fwd_gather_rest_s);
      if (cost.trains) {
        gathers(cost.last_layer_weight_bytes, t.bwd_gather_first_s, t.bwd_gather_rest_s);
      }
    }
    if (!cost.trains) continue;
    const int64_t bucket = reduction_bucket_bytes(cost, true, training.grad_bucket_bytes);
    for (const BucketPiece& piece : bucket_pieces(r.bytes, bucket)) {
      t.scatter_pieces.push_back(
          {piece.lead_share,
           collective_time(setup, kProgramReduceScatter, r.group, piece.bytes, piece.buckets)});
    }
  }
}

}  // namespace

double in_pass_collective_seconds(const ResolvedScenario& setup, const StageCost& cost,
                                  const GpuNumbering& gpus, int32_t device, double samples,
                                  bool forward) {
  const PassCollectives p = pass_collectives(setup, cost, gpus, device, samples, forward);
  return p.tensor_s + p.tensor_hidden_s + p.expert_s;
}

double collective_time(const ResolvedScenario& setup, Collective kind,
                       const std::vector<int32_t>& group, double bytes, int32_t count) {
  if (group.size() < 2 || bytes <= 0 || count <= 0) return 0;
  return collective_seconds(setup.cluster, kind, group, std::llround(bytes), count);
}

PipelinePasses replica_passes(const ResolvedScenario& setup, const PipelineLayout& layout,
                              const GpuNumbering& gpus) {
  const TrainingSpec& training = setup.training;
  const int32_t chunks = static_cast<int32_t>(layout.costs.size());
  const OffloadSpec& offload = setup.schedule.offload;
  const bool dualpipe = setup.schedule.kind == proto::DUALPIPE;
  const int32_t stages = setup.schedule.stages;

  PipelinePasses passes;
  passes.devices = layout.devices_per_replica;
  // DeepSeek-V3's F&B chunks, Megatron-Core's 1F1B pairs: a pass's expert all-to-alls run
  // under the next compute op (sim/schedule/expert_all_to_all.h).
  if (training.expert_parallel > 1) passes.expert_overlap = expert_overlap(setup);
  for (int32_t c = 0; c < chunks; ++c) {
    const StageCost& cost = layout.costs[c];
    const int32_t device = layout.stage_device[c];
    const double samples = layout.fwd_ranges[c].front().size();
    const PassCollectives fwd = pass_collectives(setup, cost, gpus, device, samples, true);
    const PassCollectives bwd = pass_collectives(setup, cost, gpus, device, samples, false);
    ChunkPassTimes t;
    t.device = device;
    // DualPipe's reverse pipeline, chunks K..2K-1, starts anew at chunk K.
    t.first = c == 0 || (dualpipe && c == stages);
    t.last = c + 1 == chunks || (dualpipe && c + 1 == stages);
    const double f = cost.fwd.seconds(samples), b = cost.bwd.seconds(samples);
    const double bi = cost.bwd_input.seconds(samples), bw = cost.bwd_weight.seconds(samples);
    t.fwd_s = f;
    t.fwd_after_s = fwd.extra(f);
    if (cost.trains) {
      t.bwd_s = b;
      t.bwd_after_s = bwd.extra(b);
      t.bwd_input_s = bi;
      t.bwd_input_after_s = bwd.extra(bi, false);
      t.bwd_weight_s = bw;
    }
    add_sharded_data_parallel(setup, cost, gpus, device, t);
    const bool offloaded =
        offload.enabled && offload.activations &&
        std::find(offload.stages.begin(), offload.stages.end(), c) != offload.stages.end();
    const double kept = offloaded ? 1 - offload.fraction : 1.0;
    // As lowering rounds them (lowering_compute.cpp, lowering_transfers.cpp).
    const int64_t whole = std::llround(cost.stash_bytes_per_sample * samples);
    t.stash_bytes = std::llround(whole * kept);
    t.weight_stash_bytes =
        std::llround(std::llround(cost.bwd_weight_stash_bytes_per_sample * samples) * kept);
    if (!t.first && layout.stage_device[c - 1] != device) {
      t.fwd_input_bytes = std::llround(layout.costs[c - 1].output_bytes_per_sample * samples);
    }
    if (!t.last && layout.stage_device[c + 1] != device) {
      t.bwd_input_bytes = cost.trains ? std::llround(cost.output_bytes_per_sample * samples) : 0;
      const int32_t next = layout.stage_device[c + 1];
      const double bytes = cost.output_bytes_per_sample * samples;
      passes.forward_transfer_s.push_back(
          device_transfer_seconds(setup.cluster, gpus.gpu(device), gpus.gpu(next), bytes));
      passes.backward_transfer_s.push_back(
          device_transfer_seconds(setup.cluster, gpus.gpu(next), gpus.gpu(device), bytes));
    } else if (c + 1 < chunks) {
      passes.forward_transfer_s.push_back(0);
      passes.backward_transfer_s.push_back(0);
    }
    passes.chunks.push_back(t);
  }
  return passes;
}

}  // namespace pipetwin
