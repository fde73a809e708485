// The layers one rank holds, and their optimizers, kept across the Programs of a run: a
// FreezePipe run executes one Program per phase, and between phases layers freeze and
// move between ranks with their trained weights and optimizer state. One optimizer per
// layer, so that a layer's state travels with it; for SGD, momentum and Adam this is the
// same update as one optimizer over all parameters.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "backend/torch/expert_parallel_group.h"
#include "backend/torch/tensor_parallel_group.h"
#include "backend/torch/torch_pch.h"
#include "scenario.pb.h"
#include "sim/model/zoo_architecture.h"

namespace pipetwin {

class RankModel {
 public:
  // With `tensor_parallel` splitting, every layer held is this rank's part of it; with
  // `expert_parallel`, a mixture-of-experts layer holds this rank's experts.
  RankModel(const ZooArchitecture& arch, proto::Optimizer optimizer, uint64_t seed,
            const TensorParallelGroup& tensor_parallel = {},
            const ExpertParallelGroup& expert_parallel = {});

  const TensorParallelGroup& tensor_parallel() const { return tensor_parallel_; }
  const ExpertParallelGroup& expert_parallel() const { return expert_parallel_; }

  // Layers [first, last) as one pipeline stage: the held modules themselves. Layers not
  // held yet are built with their initial weights (seeded per layer, as zoo_layers).
  torch::nn::Sequential stage(int first, int last);
  bool holds(int layer) const;
  torch::nn::Module& layer(int l);

  // Weight stashing (asynchronous pipelines): a copy of layers [first, last) with the
  // current weights, for forwards that must keep them while updates go on; and the
  // gradients a copy's backwards produced, added to the layers' own (the copy's zeroed).
  torch::nn::Sequential snapshot(int first, int last);
  void add_gradients_of(torch::nn::Sequential& copy, int first, int last);

  // The optimizer step of the training layers in [first, last), then zeroed gradients.
  void step(int first, int last);

  // Freezes the prefix [0, frozen): no gradients from now on, optimizer state dropped.
  void freeze_prefix(int frozen);
  int frozen() const { return frozen_; }

  // Migration. The payload of some layers: every parameter, then (if they train) each
  // parameter's optimizer state tensors, flattened into one float tensor; Adam's step
  // counts go separately (one per parameter; the cost model does not count them).
  struct Payload {
    torch::Tensor values;
    torch::Tensor steps;  // int64
  };
  Payload export_layers(const std::vector<int>& layers);
  // Builds the layers and loads a payload export_layers made for them elsewhere.
  void import_layers(const std::vector<int>& layers, const Payload& payload);
  // Elements export_layers puts in `values`, and entries in `steps` (builds the layers
  // not held yet: a receiver sizes its buffers before it imports).
  int64_t payload_values(const std::vector<int>& layers);
  int64_t payload_steps(const std::vector<int>& layers);
  // Drops every layer not in `kept` (after a repartition moved it elsewhere).
  void release_all_but(const std::set<int>& kept);

 private:
  bool trains(int layer) const { return layer >= frozen_; }
  // Layer l's module, built first (with its optimizer if it trains) when not held yet.
  torch::nn::AnyModule held(int l);
  // Layer l's optimizer; nullptr when it does not train.
  torch::optim::Optimizer* optimizer_of(int l);
  torch::optim::Optimizer& trained_optimizer(int l);  // throws when it has none

  ZooArchitecture arch_;
  proto::Optimizer kind_;
  uint64_t seed_;
  TensorParallelGroup tensor_parallel_;
  ExpertParallelGroup expert_parallel_;
  int frozen_ = 0;
  // The rank's lanes share the maps: during a repartition one lane exports the layers that
  // leave while another builds and imports those that arrive. Their nodes never move, so a
  // module or optimizer found under the lock stays valid after it (only release_all_but,
  // between Programs, erases).
  mutable std::mutex mutex_;
  std::map<int, torch::nn::AnyModule> layers_;
  std::map<int, std::unique_ptr<torch::optim::Optimizer>> optimizers_;  // training layers
};

}  // namespace pipetwin
