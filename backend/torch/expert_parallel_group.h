// The E ranks that share one stage's experts (expert parallelism), as a rank's MoE layers see
// them, and the token exchange between them. Megatron-Core takes the expert-parallel group
// from the data-parallel one: replicas r with the same r / E hold the same stage, each with
// E-th of its experts (expert e on group rank e / (experts / E)), and every token goes to
// the ranks of the experts its router picked and comes back. Ranks are numbered tp
// innermost, then stage, then replica (rank t + T (s + P r)), as the simulator numbers GPUs.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/torch/torch_pch.h"

namespace pipetwin {

struct ExpertParallelGroup {
  int32_t size = 1;                        // E: 1 means every rank holds every expert
  int32_t rank = 0;                        // this rank's place in the group
  c10d::ProcessGroupGloo* gloo = nullptr;  // the E ranks; null when size is 1

  bool splits() const { return size > 1; }
};

// The world ranks of the expert-parallel group of world rank `rank`, in a job whose
// replicas hold `per_replica` ranks each.
std::vector<int> expert_parallel_ranks(int rank, int32_t size, int32_t per_replica);

// Rows of `x` sent to each group rank (x holds them in rank order, `send_rows[r]` for rank
// r), received from each (`receive_rows[r]` from rank r, in rank order): one all-to-all.
// Its backward sends the gradients back the way the rows came.
torch::Tensor exchange_rows(const torch::Tensor& x, const std::vector<int64_t>& send_rows,
                            const std::vector<int64_t>& receive_rows,
                            const ExpertParallelGroup& group);

// Every rank's `counts` cut into `size` equal parts, part r to rank r: what each rank
// receives, in rank order (int64, no gradient).
torch::Tensor exchange_counts(const torch::Tensor& counts, const ExpertParallelGroup& group);

}  // namespace pipetwin
