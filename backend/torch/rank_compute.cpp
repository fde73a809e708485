// A rank's compute: forward, backward (PipeFB's recompute included), the loss, the
// optimizer step and weight stashing, the weight versions asynchronous pipelines keep.
#include <algorithm>
#include <memory>
#include <vector>

#include "backend/torch/rank_executor_state.h"
#include "sim/spec/errors.h"

namespace pipetwin {

// The stage's update; with weight stashing the next forward takes a copy of the new weights.
void RankExecutor::update(const Instruction& ins) {
  if (const std::vector<ZeroShards*> parts = shards_of(ins.stage); !parts.empty()) {
    for (ZeroShards* shards : parts) shards->step();  // ZeRO: this rank's shards only
    return;
  }
  const auto [first, last] = layers_[ins.stage];
  collectives_.reduce_sequence_parallel_gradients(stages_.at(ins.stage));
  record_gradient_norms(ins);
  model_.step(first, last);
  weights_.updated(ins.stage);
}

void RankExecutor::forward(int32_t i) {
  const Instruction& ins = p_.instructions[i];
  torch::Tensor input =
      reads_data(ins.stage)
          ? ActivationStore::rows(data(ins.iteration).first, {0, p_.global_batch}, ins.range)
          : gather_pieces(i, Op::kRecvAct);
  // No gradient is wanted for the input when everything upstream is frozen.
  const bool upstream_trains = layers_[ins.stage].first > model_.frozen();
  input =
      input.detach().requires_grad_(!reads_data(ins.stage) && !split_stages_ && upstream_trains);
  Stash& stash = activations_.stash(i);
  stash.input = input;
  torch::nn::Sequential& weights =
      weights_.for_forward(i, ins.stage, layers_[ins.stage], stages_.at(ins.stage), stash.weights);
  if (split_stages_) {  // the backward rank recomputes: nothing to record here
    const torch::NoGradGuard no_grad;
    activations_.produced(i) = stages_.at(ins.stage)->forward(input);
    activations_.stash_bytes(i) = input.numel() * static_cast<int64_t>(input.element_size());
    return;
  }
  // Layer by layer, to count the activations the backward keeps: each layer's output
  // (a frozen prefix's outputs need no gradient, so autograd keeps nothing for them).
  torch::Tensor x = input;
  int64_t kept = 0;
  for (auto& layer : *weights) {
    x = layer.forward(x);
    if (x.requires_grad()) kept += x.numel() * static_cast<int64_t>(x.element_size());
  }
  activations_.stash_bytes(i) = kept;
  stash.output = x;
  stash.rows_left = ins.range.size();
  activations_.produced(i) = stash.output;
}

// An iteration's minibatch, made once (by the first FWD or loss that needs it) and kept
// until the next iteration's, so that microbatches only slice it.
const std::pair<torch::Tensor, torch::Tensor>& RankExecutor::data(int iteration) {
  if (data_iteration_ != iteration) {
    // The run's iteration, not the Program's: a phase continues the run's data.
    const int run_iteration = context_.first_iteration + iteration;
    data_ = {task_.inputs(run_iteration), task_.targets(run_iteration)};
    data_iteration_ = iteration;
  }
  return data_;
}

// The FWDs of the same stage whose samples this BWD covers, in sample order.
std::vector<int32_t> RankExecutor::covered_forwards(int32_t i) const {
  const Instruction& ins = p_.instructions[i];
  std::vector<int32_t> forwards;
  for (int32_t d : collectives_.inputs_of(i)) {
    const Instruction& dep = p_.instructions[d];
    if (dep.op == Op::kFwd && dep.stage == ins.stage && dep.range.intersect(ins.range).size() > 0) {
      forwards.push_back(d);
    }
  }
  std::sort(forwards.begin(), forwards.end(), [&](int32_t a, int32_t b) {
    return p_.instructions[a].range.lo < p_.instructions[b].range.lo;
  });
  if (forwards.empty()) throw RuntimeFailure(p_.describe(i) + " has no forward of its samples");
  return forwards;
}

// Backward of samples `range` through the graphs their forwards built. A forward cut
// in two by the backward cut is back-propagated once per piece (autograd cannot split
// a graph), keeping its graph until the last piece.
// PipeFB: the stage's input came from its forward rank; run the forward again with
// autograd, then the backward.
void RankExecutor::recompute_and_backward(int32_t i) {
  const Instruction& ins = p_.instructions[i];
  int32_t handed = -1;
  for (int32_t d : collectives_.inputs_of(i)) {
    if (p_.instructions[d].op == Op::kRecvStash) handed = d;
  }
  if (handed < 0) throw std::logic_error(p_.text(i) + " recomputes without a received stash");
  const bool float_input = activations_.produced(handed).is_floating_point();
  const torch::Tensor input = activations_.produced(handed).detach().requires_grad_(float_input);
  const torch::Tensor output = stages_.at(ins.stage)->forward(input);
  if (computes_loss(ins.stage)) {
    loss_backward(ins, output, /*keep_graph=*/false);
  } else {
    output.backward(gather_pieces(i, Op::kRecvGrad));
  }
  if (!reads_data(ins.stage)) activations_.produced(i) = input.grad().detach();
  activations_.produced(handed) = torch::Tensor();
}

// The last stage: the loss of samples `ins.range` from their outputs, back-propagated.
// Mean over the minibatch: each microbatch weighs by its share of samples.
void RankExecutor::loss_backward(const Instruction& ins, const torch::Tensor& output,
                                 bool keep_graph) {
  const torch::Tensor target =
      ActivationStore::rows(data(ins.iteration).second, {0, p_.global_batch}, ins.range);
  const double share = static_cast<double>(ins.range.size()) / p_.global_batch;
  const torch::Tensor loss = zoo_loss(arch_, output, target) * share;
  losses_[ins.iteration] += loss.item<double>();
  loss.backward({}, keep_graph);
}

void RankExecutor::backward(int32_t i) {
  if (split_stages_) return recompute_and_backward(i);
  const Instruction& ins = p_.instructions[i];
  const std::vector<int32_t> forwards = covered_forwards(i);
  std::vector<torch::Tensor> outputs;
  bool keep_graph = false;
  for (int32_t f : forwards) {
    const SampleRange piece = p_.instructions[f].range.intersect(ins.range);
    outputs.push_back(
        ActivationStore::rows(activations_.stash(f).output, p_.instructions[f].range, piece));
    keep_graph |= activations_.stash(f).rows_left > piece.size();
  }
  if (computes_loss(ins.stage)) {
    loss_backward(ins, outputs.size() == 1 ? outputs[0] : torch::cat(outputs, 0), keep_graph);
  } else if (!outputs[0].requires_grad()) {
    // A frozen stage: nothing here or upstream trains, the gradient is a bare token.
  } else {
    const torch::Tensor grad = gather_pieces(i, Op::kRecvGrad);
    std::vector<torch::Tensor> grads;
    for (int32_t f : forwards) {
      const SampleRange piece = p_.instructions[f].range.intersect(ins.range);
      grads.push_back(ActivationStore::rows(grad, ins.range, piece));
    }
    torch::autograd::backward(outputs, grads, keep_graph);
  }
  std::vector<torch::Tensor> input_grads;
  for (int32_t f : forwards) {
    Stash& stash = activations_.stash(f);
    if (stash.weights) {  // computed on a stashed version; the update applies it to the latest
      model_.add_gradients_of(*stash.weights, layers_[ins.stage].first, layers_[ins.stage].second);
    }
    const SampleRange piece = p_.instructions[f].range.intersect(ins.range);
    if (!reads_data(ins.stage) && !stash.input.requires_grad()) {
      input_grads.push_back(torch::empty({0}));  // nothing upstream wants it
    } else if (!reads_data(ins.stage)) {
      // Samples are independent, so the rows outside this piece got no gradient. The
      // gradient is detached from the input, so the next piece of the same forward
      // accumulates into a fresh tensor and this view needs no copy.
      input_grads.push_back(
          ActivationStore::rows(stash.input.grad(), p_.instructions[f].range, piece));
      stash.input.mutable_grad() = torch::Tensor();
    }
    stash.rows_left -= piece.size();
    if (stash.rows_left == 0) activations_.release(f);
  }
  if (!reads_data(ins.stage)) {
    activations_.produced(i) =
        input_grads.size() == 1 ? input_grads[0] : torch::cat(input_grads, 0);
    if (activations_.produced(i).numel() == 0) activations_.produced(i) = torch::empty({0});
  }
}

}  // namespace pipetwin
