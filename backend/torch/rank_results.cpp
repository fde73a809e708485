// What a rank measures and how every rank's measurements merge into one result: gradient
// norms (AutoFreeze's statistic), the one sum all-reduce over named slots, and the
// Program with the measured stash bytes.
#include <cmath>
#include <map>
#include <vector>

#include "backend/common/measured_times.h"
#include "backend/common/merge_slots.h"
#include "backend/torch/decoder_layers.h"
#include "backend/torch/rank_executor_state.h"
#include "backend/torch/tensor_parallel_layers.h"

namespace pipetwin {

// AutoFreeze's statistic: each layer's gradient L1 norm, summed over the interval. Only
// replica 0 counts (after ALLREDUCE the replicas' gradients are the same); its
// tensor-parallel ranks count their shards, and the replicated parameters once.
void RankExecutor::record_gradient_norms(const Instruction& ins) {
  const int32_t interval = options_.gradient_interval;
  // DualPipe's second copy of a stage holds the same gradients after their ALLREDUCE.
  if (interval <= 0 || ins.range.lo != 0 || p_.model_stage_of(ins.stage) != ins.stage) return;
  const int32_t k = ins.iteration / interval;
  const auto [first, last] = layers_[ins.stage];
  const int layers = static_cast<int>(arch_.layers.size());
  for (int l = first; l < last; ++l) {
    double norm = 0;
    for (const auto& p :
         counted_parameters(*(*stages_.at(ins.stage))[l - first], model_.tensor_parallel().rank)) {
      if (p.grad().defined()) norm += p.grad().abs().sum().item<double>();
    }
    gradient_norms_[static_cast<size_t>(k) * layers + l] += norm;
  }
}

// One all-reduce of every rank's share: each slot is written by one rank (or, for
// losses, summed over the replicas' last stages; for weights, over the tensor-parallel
// ranks of replica 0, each adding its shards, and the experts of its expert group).
MeasuredRun RankExecutor::gather(double offset) {
  const int64_t n = p_.size();
  const int layers = static_cast<int>(arch_.layers.size());
  SlotLayout layout;
  // Per instruction, from the rank that ran it.
  const Slot starts = layout.add(n);
  const Slot ends = layout.add(n);
  const Slot stashes = layout.add(n);   // FWD: bytes autograd keeps
  const Slot payloads = layout.add(n);  // SEND kinds: bytes sent
  const Slot versions = layout.add(n);  // FWD: its weight version + 1; 0: not a FWD
  const Slot losses = layout.add(p_.iterations);
  const Slot weights = layout.add(layers);  // per layer: its parameters' sum
  std::vector<Slot> norms;                  // per gradient interval: a norm per layer
  for (size_t k = 0; k * layers < gradient_norms_.size(); ++k) norms.push_back(layout.add(layers));

  std::vector<double> values = layout.zeros<double>();
  for (int32_t i = 0; i < n; ++i) {
    if (p_.instructions[i].device != env_.rank) continue;
    starts.in(values, i) = times_.start_s[i];
    ends.in(values, i) = times_.end_s[i];
    stashes.in(values, i) = static_cast<double>(activations_.stash_bytes(i));
    versions.in(values, i) = weights_.version_of(i) + 1;
    if (is_send(p_.instructions[i].op))
      payloads.in(values, i) = static_cast<double>(wire_.payload_bytes(i));
  }
  for (size_t k = 0; k < norms.size(); ++k) {
    for (int l = 0; l < layers; ++l) norms[k].in(values, l) = gradient_norms_[k * layers + l];
  }
  // Every replica's last stage holds its share of each iteration's loss; its
  // tensor-parallel ranks all computed the same loss, of which rank 0's counts.
  const TensorParallelGroup& tp = model_.tensor_parallel();
  if (tp.rank == 0) {
    for (int it = 0; it < p_.iterations; ++it) losses.in(values, it) = losses_[it];
  }
  // Replica 0's weights stand for all: the tensor-parallel ranks of its stage; with expert
  // parallelism the experts of the first copy of each expert group (expert data rank 0),
  // each rank adding its own, and no other copy's (with expert groups folded inside a
  // replica, replica 0 holds other copies too).
  const int32_t replica = env_.rank / devices_per_replica_;
  const ExpertParallelGroup& experts = model_.expert_parallel();
  const bool first_copy = !experts.splits() || experts.data_rank == 0;
  const bool counts = replica == 0 || (experts.splits() && first_copy);
  const int32_t place = env_.rank - replica * devices_per_replica_;  // as if in replica 0
  for (auto& [s, stage] : stages_) {
    if (!counts || p_.stage_device[s] / tp.size != place / tp.size) continue;
    if (p_.model_stage_of(s) != s) continue;  // DualPipe's copy: the same weights
    for (int l = layers_[s].first; l < layers_[s].second; ++l) {
      torch::nn::Module& layer = *stage[l - layers_[s].first];
      const std::vector<torch::Tensor> counted =
          replica != 0 ? expert_parameters(layer)
          : first_copy ? counted_parameters(layer, tp.rank)
                       : experts_apart(layer, counted_parameters(layer, tp.rank)).others;
      double sum = 0;
      for (const auto& p : counted) sum += p.sum().item<double>();
      weights.in(values, l) = sum;
    }
  }
  // Gloo sums in place, through a tensor that views the buffer.
  std::vector<torch::Tensor> buffer = {
      torch::from_blob(values.data(), {layout.size()}, torch::kFloat64)};
  session_.job.world->allreduce(buffer)->wait();

  MeasuredRun result;
  result.clock_offset_s = offset;
  result.times.start_s = starts.read(values);
  result.times.end_s = ends.read(values);
  pair_transfer_times(p_, result.times);
  result.losses = losses.read(values);
  result.weights = weights.read(values);
  for (int32_t i = 0; i < n; ++i) {
    result.stash_bytes.push_back(std::llround(stashes.in(values, i)));
    result.payload_bytes.push_back(std::llround(payloads.in(values, i)));
    result.forward_versions.push_back(static_cast<int32_t>(std::llround(versions.in(values, i))) -
                                      1);
  }
  for (const Slot& norm : norms) result.gradient_norms.push_back(norm.read(values));
  return result;
}

Program with_measured_stash(const Program& program, const MeasuredRun& run) {
  Program measured = program;
  // Per stage, bytes per sample as measured (and as simulated); a BWD frees its own
  // samples' share, and the halves of a split backward their simulated parts of it.
  std::map<int32_t, double> per_sample, simulated_per_sample;
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& ins = program.instructions[i];
    if (ins.op != Op::kFwd) continue;
    measured.instructions[i].stash_bytes = run.stash_bytes[i];
    per_sample[ins.stage] = static_cast<double>(run.stash_bytes[i]) / ins.range.size();
    simulated_per_sample[ins.stage] = static_cast<double>(ins.stash_bytes) / ins.range.size();
  }
  for (Instruction& ins : measured.instructions) {
    if (ins.op == Op::kBwd) {
      ins.stash_bytes = std::llround(per_sample[ins.stage] * ins.range.size());
    } else if (ins.op == Op::kBwdInput || ins.op == Op::kBwdWeight) {
      const double simulated = simulated_per_sample[ins.stage] * ins.range.size();
      const double part = simulated > 0 ? ins.stash_bytes / simulated : 0.5;
      ins.stash_bytes = std::llround(part * per_sample[ins.stage] * ins.range.size());
    }
  }
  return measured;
}

}  // namespace pipetwin
