// What a rank's point-to-point transfers carry: activations, gradients, PipeFB's
// handed-over inputs and weights, and the pieces a compute op concatenates. The wire itself
// is point_to_point.h.
#include <algorithm>
#include <utility>
#include <vector>

#include "backend/torch/rank_executor_state.h"
#include "backend/torch/tensor_parallel_layers.h"

namespace pipetwin {

// Concatenates, in sample order, the pieces a compute instruction received or got
// from a producer on this device.
torch::Tensor RankExecutor::gather_pieces(int32_t i, Op wanted) {
  std::vector<std::pair<int32_t, torch::Tensor>> pieces;
  const Instruction& ins = p_.instructions[i];
  const SampleRange mine = ins.range;
  // A neighbouring stage on this same device hands its result over without a transfer.
  const bool forward = wanted == Op::kRecvAct;
  const int32_t local_stage = forward ? ins.stage - 1 : ins.stage + 1;
  for (int32_t d : collectives_.inputs_of(i)) {
    const Instruction& dep = p_.instructions[d];
    if (dep.op == wanted) {
      pieces.emplace_back(dep.range.lo, activations_.produced(d));
    } else if ((forward ? dep.op == Op::kFwd : computes_input_gradient(dep.op)) &&
               dep.stage == local_stage) {
      // (With tensor parallelism the pass before on the lane is an input too.)
      const SampleRange piece = dep.range.intersect(mine);
      if (piece.size() > 0)
        pieces.emplace_back(piece.lo,
                            ActivationStore::rows(activations_.produced(d), dep.range, piece));
    }
  }
  std::sort(pieces.begin(), pieces.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<torch::Tensor> tensors;
  for (auto& [lo, t] : pieces) tensors.push_back(t);
  return tensors.size() == 1 ? tensors[0] : torch::cat(tensors, 0);
}

void RankExecutor::send(int32_t i) {
  const Instruction& ins = p_.instructions[i];
  if (ins.op == Op::kMigrate) return send_layers(i);  // a migration has no producer
  std::vector<torch::Tensor> payload;
  if (ins.op == Op::kSendWeights || (ins.bytes == 0 && ins.op == Op::kSendGrad)) {
    // Updated weights back to PipeFB's forward device, or a token into a frozen stage.
    payload = {ins.op == Op::kSendWeights ? flat_parameters(ins.stage) : torch::empty({0})};
    wire_.send(i, payload);
    return;
  }
  int32_t producer = -1;
  for (int32_t d : collectives_.inputs_of(i)) producer = d;
  if (producer < 0) throw std::logic_error(p_.text(i) + " sends nothing: it has no producer");
  const Instruction& from = p_.instructions[producer];
  if (ins.op == Op::kSendStash) {
    payload = {ActivationStore::rows(activations_.stash(producer).input, from.range, ins.range)
                   .detach()
                   .contiguous()};
  } else {
    payload = {ActivationStore::rows(activations_.produced(producer), from.range, ins.range)
                   .detach()
                   .contiguous()};
  }
  wire_.send(i, payload);
  if (ins.op == Op::kSendStash) activations_.stash(producer) = Stash{};  // it has left
}

torch::Tensor RankExecutor::flat_parameters(int32_t stage) {
  std::vector<torch::Tensor> flat;
  for (const auto& p : stages_.at(stage)->parameters()) flat.push_back(p.detach().flatten());
  return flat.empty() ? torch::zeros({1}) : torch::cat(flat);
}

void RankExecutor::receive(int32_t i) {
  const Instruction& ins = p_.instructions[i];
  if (ins.op == Op::kMigrateRecv) return receive_layers(i);
  if (ins.op == Op::kRecvGrad && ins.bytes == 0) {
    std::vector<torch::Tensor> token = {torch::empty({0})};
    wire_.receive(i, token);
    activations_.produced(i) = token[0];
    return;
  }
  if (ins.op == Op::kRecvWeights) {  // the backward rank's updated weights
    int64_t count = 0;
    for (const auto& p : stages_.at(ins.stage)->parameters()) count += p.numel();
    std::vector<torch::Tensor> buffer = {torch::empty({std::max<int64_t>(count, 1)})};
    wire_.receive(i, buffer);
    const torch::NoGradGuard no_grad;
    int64_t offset = 0;
    for (auto& p : stages_.at(ins.stage)->parameters()) {
      p.copy_(buffer[0].slice(0, offset, offset + p.numel()).view_as(p));
      offset += p.numel();
    }
    return;
  }
  // Activations and handed-over inputs enter this stage's first layer; gradients leave
  // its last one. Stage 0's input may be token ids. With tensor parallelism, rank t of
  // a stage exchanges with rank t of the next what it holds there: the whole activation,
  // or its part where the layers leave one split (rank_boundary_shape).
  const auto [first, last] = layers_[ins.stage];
  std::vector<int64_t> shape = {ins.range.size()};
  for (int64_t d : rank_boundary_shape(arch_, ins.op == Op::kRecvGrad ? last : first,
                                       model_.tensor_parallel())) {
    shape.push_back(d);
  }
  const bool tokens = first == 0 && arch_.input_vocab > 0 && ins.op != Op::kRecvGrad;
  std::vector<torch::Tensor> buffer = {torch::empty(shape, tokens ? torch::kLong : torch::kFloat)};
  wire_.receive(i, buffer);
  activations_.produced(i) = buffer[0];
}

}  // namespace pipetwin
