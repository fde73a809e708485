// The E ranks that share one stage's experts (expert parallelism), as a rank's MoE layers see
// them (its group and place are backend/common/expert_folding_ranks.h's), and the token
// exchange between them: group rank e holds the E-th of the experts from e (experts / E),
// and every token goes to the ranks of the experts its router picked and comes back.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/common/expert_folding_ranks.h"
#include "backend/torch/torch_pch.h"

namespace pipetwin {

struct ExpertParallelGroup {
  int32_t size = 1;                        // E: 1 means every rank holds every expert
  int32_t rank = 0;                        // this rank's place in the group
  int32_t data_rank = 0;                   // which copy of the group's experts it holds
  c10d::ProcessGroupGloo* gloo = nullptr;  // the E ranks; null when size is 1
  // ETP = T > 1: every expert's width splits over the tensor-parallel group, which first
  // gathers its ranks' tokens (each holds 1/T of the sequence); false: whole experts, each
  // rank routing its own tokens.
  bool experts_split = false;

  bool splits() const { return size > 1; }
};

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
