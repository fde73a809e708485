#include "sim/tune/replica_updates.h"

#include <algorithm>
#include <vector>

#include "sim/network/network_model.h"
#include "sim/schedule/gradient_buckets.h"
#include "sim/tune/gradient_reductions.h"
#include "sim/tune/replica_passes.h"

namespace pipetwin {

double replica_updates_end(const ResolvedScenario& setup, const PipelineLayout& layout,
                           const GpuNumbering& gpus, const PipelinePasses& passes,
                           const PipelineTiming& timing) {
  const TrainingSpec& training = setup.training;
  const int32_t chunks = static_cast<int32_t>(layout.costs.size());
  const bool dualpipe = setup.schedule.kind == proto::DUALPIPE;
  const int32_t stages = setup.schedule.stages;
  // What gradient buckets lead by: the compute of the pass that produces the weight gradients.
  const auto weight_gradient_compute_s = [&](int32_t c) {
    return is_zero_bubble(setup.schedule.kind) ? passes.chunks[c].bwd_weight_s
                                               : passes.chunks[c].bwd_s;
  };
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
    // for that backward's collectives too (sim/schedule/gradient_buckets.h), and after the
    // flush for every chunk's of the device (sim/schedule/reduce_after_flush.h).
    double flush = 0;
    if (training.grad_reduce_after_flush) {
      for (int32_t x : own) flush = std::max(flush, timing.last_backward_ready_s[x]);
    }
    const auto ready_at = [&](int32_t c, double lead_share, bool split) {
      double ready = flush;
      for (int32_t x : holders(c)) {
        ready = std::max(
            ready, split ? timing.last_backward_end_s[x] - lead_share * weight_gradient_compute_s(x)
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
    double lane_free = timing.data_parallel_free_s[d];
    std::vector<double> reduced(chunks, 0);
    std::vector<std::vector<Reduction>> reductions(chunks);
    for (int32_t c : reduction_order) {
      const StageCost& cost = layout.costs[c];
      std::vector<int32_t> devices;
      for (int32_t x : holders(c)) devices.push_back(layout.stage_device[x]);
      reductions[c] = reductions_of(setup, cost, gpus, devices);
      reduced[c] = timing.last_backward_end_s[c];
      // ZeRO 2 and 3 scattered the gradients after every backward already.
      if (zero >= 2) {
        reduced[c] = std::max(reduced[c], timing.last_scatter_end_s[c]);
        continue;
      }
      for (const Reduction& r : reductions[c]) {
        const int64_t bucket = reduction_bucket_bytes(cost, reduce_kind == kProgramReduceScatter,
                                                      training.grad_bucket_bytes);
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

  return makespan;
}

}  // namespace pipetwin
