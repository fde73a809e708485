// ZeRO on real ranks (training.zero_stage): each layer of a stage flattened, as PyTorch FSDP
// flattens a module, and cut into one shard per member of the stage's data-parallel group.
// With expert parallelism a stage has two: its dense parameters over the data-parallel group,
// its experts' over the expert-data-parallel group (a group of one where each expert group
// is the only copy: its "shard" is everything, updated and written back in place).
// A rank keeps the optimizer state and the summed gradient of its shards only and updates
// them alone; REDUCE_SCATTER sums a backward's gradients into the shards, ALL_GATHER writes
// the members' shards back into the layers' parameters. LibTorch 1.13's autograd keeps the
// parameters it computed with, so the layers stay allocated whole here: the memory saving is
// the simulator's; the communication, the sharded update and the numbers are real. A pass
// waits until its stage's layers are gathered, where FSDP waits layer by layer.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/torch/torch_pch.h"
#include "scenario.pb.h"

namespace pipetwin {

class ZeroShards {
 public:
  // `member` of `members`: this rank's place in the sorted group that holds the same
  // `parameters` (per layer of the stage, its trainable parameters of this kind).
  ZeroShards(const std::vector<std::vector<torch::Tensor>>& parameters, proto::Optimizer optimizer,
             int member, int members);

  int layers() const { return static_cast<int>(layers_.size()); }
  struct LayerRange {
    int first = 0;
    int last = 0;  // exclusive
  };

  // ZeRO-2 and 3, on the compute lane at the end of backward `pass`: its gradients moved out
  // of the layers (zeroed for the next backward) until its REDUCE_SCATTER sends them.
  void take_gradients(int32_t pass);
  // Every layer's gradient, taken at `pass` (or, for -1, the layers' accumulated gradients),
  // summed over the group into this rank's shard: a ring of point-to-point messages, as Gloo
  // in LibTorch 1.13 has no reduce-scatter.
  void reduce_scatter(c10d::ProcessGroupGloo& group, int32_t pass);
  // The optimizer's step on this rank's shards; the layers' weights are stale until gathered.
  void step();
  // Layers [first, last) of the stage: the members' shards, written into stale parameters.
  void all_gather(c10d::ProcessGroupGloo& group, int first, int last);
  // Blocks until no layer is stale (a pass may not read weights being written).
  void wait_gathered();

 private:
  struct Layer {
    std::vector<torch::Tensor> parameters;
    int64_t size = 0;   // elements of the flattened layer
    int64_t shard = 0;  // elements per shard (the last padded)
    torch::Tensor own;  // this rank's shard of the weights, which the optimizer updates
    bool stale = false;
  };
  torch::Tensor flat_gradient(const Layer& layer) const;  // padded to members x shard
  void write_back(Layer& layer, const torch::Tensor& whole);

  std::vector<Layer> layers_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  int member_;
  int members_;
  std::mutex mutex_;  // the compute and collective lanes' threads share what follows
  std::condition_variable gathered_;
  std::map<int32_t, std::vector<torch::Tensor>> taken_;  // pass -> per layer
};

}  // namespace pipetwin
