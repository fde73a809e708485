#include "sim/tune/fast_estimate.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "sim/build_program.h"
#include "sim/network/network_model.h"
#include "sim/pipeline_pass_costs.h"
#include "sim/schedule/compute_order.h"
#include "sim/schedule/dualpipe_order.h"
#include "sim/schedule/gradient_buckets.h"
#include "sim/schedule/zero_bubble_auto.h"
#include "sim/schedule/zero_bubble_order.h"
#include "sim/tune/pipeline_timing.h"

namespace pipetwin {
namespace {

// GPU numbers after the expansions: context parallelism copies layout device d onto d C + c,
// tensor parallelism each of those onto (d C + c) T + t (sim/schedule/device_copies.h).
struct GpuNumbering {
  int32_t tensor = 1, context = 1, per_replica = 1;
  int32_t gpu(int32_t device, int32_t c = 0, int32_t t = 0) const {
    return (device * context + c) * tensor + t;
  }
  std::vector<int32_t> tensor_group(int32_t device) const {
    std::vector<int32_t> g;
    for (int32_t t = 0; t < tensor; ++t) g.push_back(gpu(device, 0, t));
    return g;
  }
  std::vector<int32_t> context_group(int32_t device) const {
    std::vector<int32_t> g;
    for (int32_t c = 0; c < context; ++c) g.push_back(gpu(device, c));
    return g;
  }
  // The replicas r = first, first + step, ... below `replicas`, with their C GPUs when asked.
  std::vector<int32_t> replica_group(int32_t device, int32_t first, int32_t step, int32_t replicas,
                                     bool with_context) const {
    std::vector<int32_t> g;
    for (int32_t r = first; r < replicas; r += step) {
      for (int32_t c = 0; c < (with_context ? context : 1); ++c) {
        g.push_back(gpu(device + r * per_replica, c));
      }
    }
    return g;
  }
};

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
      return zb_auto_candidates(M, linear_pipeline_costs(setup, layout), limit > 0 ? limit : K)
          .front()
          .order;
    }
    case proto::DUALPIPE:
      return dualpipe_order(K, M);
    default:
      return {};
  }
}

double collective_time(const ResolvedScenario& setup, Collective kind,
                       const std::vector<int32_t>& group, double bytes, int32_t count) {
  if (group.size() < 2 || bytes <= 0 || count <= 0) return 0;
  return collective_seconds(setup.cluster, kind, group, std::llround(bytes), count);
}

// What a pass of `compute_s` waits for beyond its compute on a GPU of its stage.
struct PassCollectives {
  double tensor_s = 0, expert_s = 0, context_s = 0, context_lead_share = 0;
  double gather_first_s = 0, gather_rest_s = 0;  // ZeRO-3
  double extra(double compute_s) const {
    return std::max(0.0, context_s - context_lead_share * compute_s) + expert_s + tensor_s +
           gather_first_s + std::max(0.0, gather_rest_s - compute_s);
  }
};

PassCollectives pass_collectives(const ResolvedScenario& setup, const StageCost& cost,
                                 const GpuNumbering& gpus, int32_t device, double samples,
                                 bool forward) {
  const TrainingSpec& training = setup.training;
  PassCollectives p;
  if (training.tensor_parallel > 1) {
    p.tensor_s = collective_time(
        setup, kProgramAllReduce, gpus.tensor_group(device),
        (forward ? cost.tp_fwd_bytes_per_sample : cost.tp_bwd_bytes_per_sample) * samples,
        forward ? cost.tp_fwd_collectives : cost.tp_bwd_collectives);
  }
  if (training.expert_parallel > 1) {
    p.expert_s = collective_time(
        setup, kProgramAllToAll, gpus.replica_group(device, 0, 1, training.expert_parallel, false),
        (forward ? cost.ep_fwd_bytes_per_sample : cost.ep_bwd_bytes_per_sample) * samples,
        forward ? cost.ep_fwd_all_to_alls : cost.ep_bwd_all_to_alls);
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
  if (training.zero_stage == 3 && cost.weight_bytes > 0) {
    const std::vector<int32_t> group =
        gpus.replica_group(device, 0, 1, training.data_parallel, true);
    const double whole = static_cast<double>(cost.gradient_bytes);
    const double first = whole *
                         (forward ? cost.first_layer_weight_bytes : cost.last_layer_weight_bytes) /
                         static_cast<double>(cost.weight_bytes);
    p.gather_first_s = collective_time(setup, kProgramAllGather, group, first, 1);
    p.gather_rest_s = collective_time(setup, kProgramAllGather, group, whole - first, 1);
  }
  return p;
}

// One reduction of a stage's gradients over the GPUs holding the same weights.
struct Reduction {
  std::vector<int32_t> group;
  int64_t bytes = 0;
};

// `devices`: those holding the stage's weights in one replica (DualPipe's two copies).
std::vector<Reduction> reductions_of(const ResolvedScenario& setup, const StageCost& cost,
                                     const GpuNumbering& gpus,
                                     const std::vector<int32_t>& devices) {
  const TrainingSpec& training = setup.training;
  const int32_t E = training.expert_parallel;
  const int64_t experts = E > 1 ? cost.expert_gradient_bytes : 0;
  const auto group = [&](int32_t step) {
    std::vector<int32_t> g;
    for (int32_t d : devices) {
      const std::vector<int32_t> part =
          gpus.replica_group(d, 0, step, training.data_parallel, true);
      g.insert(g.end(), part.begin(), part.end());
    }
    return g;
  };
  std::vector<Reduction> out;
  const int32_t holders =
      training.data_parallel * training.context_parallel * static_cast<int32_t>(devices.size());
  if (holders > 1 && cost.gradient_bytes - experts > 0) {
    out.push_back({group(1), cost.gradient_bytes - experts});
  }
  if (holders / E > 1 && experts > 0) out.push_back({group(E), experts});
  return out;
}

}  // namespace

bool has_fast_estimate(const ResolvedScenario& setup) {
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
  const TrainingSpec& training = setup.training;
  const int32_t chunks = static_cast<int32_t>(layout.costs.size());
  const GpuNumbering gpus{training.tensor_parallel, training.context_parallel,
                          layout.devices_per_replica};
  const OffloadSpec& offload = setup.schedule.offload;
  const bool dualpipe = setup.schedule.kind == proto::DUALPIPE;
  const int32_t stages = setup.schedule.stages;

  PipelinePasses passes;
  passes.devices = layout.devices_per_replica;
  // DeepSeek-V3's F&B chunks: a pass's expert all-to-alls run under the next compute op
  // (sim/schedule/expert_all_to_all.h).
  passes.overlap_next_compute = dualpipe && training.expert_parallel > 1;
  passes.receives_in_production_order = dualpipe;
  std::vector<double> weight_gradient_compute_s(chunks, 0);  // what gradient buckets lead by
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
      t.bwd_input_after_s = bwd.extra(bi);
      t.bwd_weight_s = bw;
    }
    weight_gradient_compute_s[c] = is_zero_bubble(setup.schedule.kind) ? bw : b;
    const bool offloaded =
        offload.enabled && offload.activations &&
        std::find(offload.stages.begin(), offload.stages.end(), c) != offload.stages.end();
    const double kept = offloaded ? 1 - offload.fraction : 1.0;
    // As lowering rounds them (lowering_compute.cpp, lowering_transfers.cpp).
    const int64_t whole = std::llround(cost.stash_bytes_per_sample * samples);
    t.stash_bytes = std::llround(whole * kept);
    t.weight_stash_bytes = std::llround(
        std::min<int64_t>(whole, std::llround(cost.bwd_weight_stash_bytes_per_sample * samples)) *
        kept);
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
  const PipelineTiming timing =
      time_pipeline(order_of(setup, layout), training.microbatches, passes);

  // Per device: its chunks' gradient reductions on the data-parallel lane, bucketed under
  // each chunk's last backward, then its updates (ZeRO 1 and 2: the updated
  // weights gathered after each).
  const int32_t zero = training.zero_stage;
  const Collective reduce_kind = zero > 0 ? kProgramReduceScatter : kProgramAllReduce;
  double makespan = 0;
  for (int32_t d = 0; d < layout.devices_per_replica; ++d) {
    // Its chunks in the order lowering places their updates: by model stage (DualPipe's
    // copies of a stage are one model stage), the data-parallel lane taking their reductions
    // in that order (sim/schedule/lowering_compute.cpp).
    std::vector<int32_t> own;
    for (int32_t c = 0; c < chunks; ++c) {
      if (layout.stage_device[c] == d) own.push_back(c);
    }
    std::stable_sort(own.begin(), own.end(), [&](int32_t a, int32_t b) {
      return (dualpipe ? a % stages : a) < (dualpipe ? b % stages : b);
    });
    // DualPipe's copies of a stage reduce their gradients together, once both are ready.
    const auto holders = [&](int32_t c) {
      return dualpipe ? std::vector<int32_t>{c, (c + stages) % chunks} : std::vector<int32_t>{c};
    };
    // A reduction split into buckets counts from its backward's compute; one left whole waits
    // for that backward's collectives too (sim/schedule/gradient_buckets.h).
    const auto ready_at = [&](int32_t c, double lead_share, bool split) {
      double ready = 0;
      for (int32_t x : holders(c)) {
        ready = std::max(
            ready, split ? timing.last_backward_end_s[x] - lead_share * weight_gradient_compute_s[x]
                         : timing.last_backward_ready_s[x]);
      }
      return ready;
    };
    // The passes that add collectives (tensor, context and expert parallelism, ZeRO) rebuild
    // the lanes in the order of the compute ops that trigger them: then the reductions go in
    // the order of their chunks' last backwards (sim/schedule/collective_triggers.h).
    std::vector<int32_t> reduction_order = own;
    if (training.tensor_parallel > 1 || training.context_parallel > 1 ||
        training.expert_parallel > 1 || zero > 0) {
      std::stable_sort(reduction_order.begin(), reduction_order.end(), [&](int32_t a, int32_t b) {
        return timing.last_backward_end_s[a] < timing.last_backward_end_s[b];
      });
    }
    double lane_free = 0;
    std::vector<double> reduced(chunks, 0);
    std::vector<std::vector<Reduction>> reductions(chunks);
    for (int32_t c : reduction_order) {
      const StageCost& cost = layout.costs[c];
      std::vector<int32_t> devices;
      for (int32_t x : holders(c)) devices.push_back(layout.stage_device[x]);
      reductions[c] = reductions_of(setup, cost, gpus, devices);
      reduced[c] = timing.last_backward_end_s[c];
      for (const Reduction& r : reductions[c]) {
        const int64_t bucket =
            zero > 0 ? std::max(training.grad_bucket_bytes,
                                cost.gradient_bytes / std::max<int64_t>(1, cost.layers))
                     : training.grad_bucket_bytes;
        const std::vector<BucketPiece> pieces = bucket_pieces(r.bytes, bucket);
        for (const BucketPiece& piece : pieces) {
          lane_free = std::max(lane_free, ready_at(c, piece.lead_share, pieces.size() > 1)) +
                      collective_time(setup, reduce_kind, r.group, piece.bytes, piece.buckets);
        }
        reduced[c] = lane_free;
      }
    }
    double t = timing.device_end_s[d];
    for (int32_t c : own) {
      const StageCost& cost = layout.costs[c];
      double saved = 0;
      if (zero > 0) {
        for (const Reduction& r : reductions[c]) {
          saved += r.bytes * (1 - 1.0 / static_cast<double>(r.group.size()));
        }
      }
      const double whole = static_cast<double>(cost.gradient_bytes);
      const double share = whole > 0 ? std::max(0.0, 1 - saved / whole) : 1.0;
      t = std::max(t, reduced[c]) + cost.optim_s * share;
      makespan = std::max(makespan, t);
      if (zero == 1 || zero == 2) {
        for (const Reduction& r : reductions[c]) {
          lane_free = std::max(lane_free, t) +
                      collective_time(setup, kProgramAllGather, r.group, r.bytes, 1);
          makespan = std::max(makespan, lane_free);
        }
      }
    }
    makespan = std::max(makespan, lane_free);
  }

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
