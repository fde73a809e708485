// A rank's collectives: the Gloo groups its all-reduces span, joined up front; data
// parallelism's all-reduce of a stage's gradients over its replicas (with expert
// parallelism, of the experts' over the replicas that hold the same experts); sequence
// parallelism's all-reduce of the replicated parameters' gradients over the stage's
// tensor-parallel ranks; and which of the Program's collectives ran inside the pass before
// them (tensor parallelism's ALLREDUCE, expert parallelism's ALL_TO_ALL).
#pragma once

#include <cstdint>
#include <vector>

#include "backend/torch/rank_model.h"
#include "backend/torch/rank_session.h"
#include "backend/torch/torch_pch.h"
#include "sim/program/program.h"

namespace pipetwin {

class RankCollectives {
 public:
  RankCollectives(const Program& program, RankSession& session, const RankModel& model);

  // Every group this rank's collectives use, in Program order, which every member sees
  // the same.
  void join_groups();

  // A collective that ran inside the pass before it: nothing is left for it to do.
  bool ran_inside_pass(int32_t i) const;

  // The instructions whose results instruction i reads: its dependencies, each collective
  // that ran inside a pass standing for that pass (whose consumers the Program makes wait
  // for it), without ZeRO's gathers and scatters (which carry no activation), without
  // repeats.
  std::vector<int32_t> inputs_of(int32_t i) const;

  // ALLREDUCE i of `stage`'s gradients, in place.
  void allreduce(int32_t i, torch::nn::Sequential& stage);

  // The sorted devices of instruction i's collective group, and its Gloo group.
  std::vector<int> group_ranks(int32_t i) const;
  c10d::ProcessGroupGloo& group_of(int32_t i) { return session_.group(group_ranks(i)); }

  // With sequence parallelism, the replicated parameters' gradients summed over the
  // stage's tensor-parallel group (before the stage's update).
  void reduce_sequence_parallel_gradients(torch::nn::Sequential& stage);

 private:
  bool is_tensor_parallel_reduce(int32_t i) const;

  const Program& p_;
  RankSession& session_;
  const RankModel& model_;
  int rank_;
};

}  // namespace pipetwin
