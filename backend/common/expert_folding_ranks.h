// MoE parallel folding's ranks (Megatron-Core), as the real ranks number them: a stage's T x D
// tensor- and data-parallel ranks, in the order L = t + T d, are cut again into expert tensor
// parallelism (ETP, innermost: 1, or T where each expert splits like the dense MLP), expert
// parallelism (E) and expert data parallelism (the rest). World ranks are numbered tp
// innermost, then stage, then replica (rank t + T (s + P r)), as the simulator numbers GPUs;
// the simulator's groups (sim/schedule) are the same, rank for rank.
#pragma once

#include <cstdint>
#include <vector>

namespace pipetwin {

// The folded layout of one job's experts.
struct ExpertFolding {
  int32_t tensor = 1;         // T
  int32_t expert = 1;         // E
  int32_t expert_tensor = 1;  // ETP: 1 or T
  int32_t per_replica = 1;    // ranks of one data-parallel replica (T x stages)
};

// Where world rank `rank` sits among the experts: its expert-parallel rank (which experts it
// holds) and its expert-data-parallel rank (which copy of them).
struct ExpertPlace {
  int32_t expert_rank = 0;
  int32_t expert_data_rank = 0;
};
ExpertPlace expert_place(int rank, const ExpertFolding& folding);

// The world ranks of the expert-parallel group of world rank `rank`, in group-rank order.
std::vector<int> expert_parallel_ranks(int rank, const ExpertFolding& folding);

}  // namespace pipetwin
