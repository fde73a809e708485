// MoE parallel folding's layout rule (Megatron-Core): the experts' ETP x EP GPUs tile the
// tensor x context x data-parallel GPUs of a stage, numbered L = t + T (c + C d) (tp-cp-dp)
// and cut again as L = e_t + ETP (e + EP x edp) (etp-ep-edp). An expert group (the GPUs that
// exchange tokens: same e_t and edp) is then either whole replicas' tensor x context blocks,
// or a part of one block: a run of consecutive tensor ranks, or whole tensor ranks over a run
// of consecutive context ranks. pipetwin folds the groups that tile a block so; a group that
// would take part of a tensor or context run of one block and part of the next (say 3 GPUs of
// a 2 x 3 block) is refused. Shared by the scenario's checks, the Program's expansions
// (sim/schedule/context_parallel.cpp, tensor_parallel.cpp) and tune's fast evaluator.
#pragma once

#include <algorithm>
#include <cstdint>

namespace pipetwin {

enum class ExpertFoldingFit {
  kFits,
  kDoesNotDivide,  // EP x ETP does not divide TP x CP x DP
  kStraddles,  // an expert group would take part of one tensor or context run and part of another
};

inline ExpertFoldingFit expert_folding(int64_t ep, int64_t etp, int64_t tp, int64_t cp,
                                       int64_t dp) {
  if (ep == 1 && etp == tp) return ExpertFoldingFit::kFits;  // dense, or split like the MLP
  const int64_t group = ep * etp, block = tp * cp;
  if (block * dp % group != 0) return ExpertFoldingFit::kDoesNotDivide;
  if (group % block == 0) return ExpertFoldingFit::kFits;  // whole replicas
  // Inside one block. Experts split like the MLP: EP consecutive context ranks of each tensor
  // rank. Whole experts: EP consecutive tensor ranks, or all T over EP / T context ranks.
  if (etp == tp && tp > 1) {
    return cp % ep == 0 ? ExpertFoldingFit::kFits : ExpertFoldingFit::kStraddles;
  }
  if (tp % group == 0 || (group % tp == 0 && cp % (group / tp) == 0)) {
    return ExpertFoldingFit::kFits;
  }
  return ExpertFoldingFit::kStraddles;
}

// Where one replica's tensor and context ranks (t, c) fall among a stage's expert groups, for
// a layout that fits. Two GPUs exchange tokens (one expert group) when their tensor_run and
// context_run keys match; they hold the same experts (their gradients reduce together) when
// their tensor_slot and context_slot keys do. Whole replicas: every tensor and context rank
// of a replica in one group (a run of T and C), each at its own place.
struct ExpertGroupRuns {
  int32_t tensor = 1;   // consecutive tensor ranks in one group (1: experts split like the MLP)
  int32_t context = 1;  // consecutive context ranks in one group
  // The places a replica's tensor ranks take among the experts: the run's length, or T where
  // each expert splits like the MLP (ETP = T > 1: tensor rank t holds the t-th slice).
  int32_t tensor_slots = 1;

  int32_t tensor_run(int32_t t) const { return t / tensor; }
  int32_t context_run(int32_t c) const { return c / context; }
  int32_t tensor_slot(int32_t t) const { return t % tensor_slots; }
  int32_t context_slot(int32_t c) const { return c % context; }
};

inline ExpertGroupRuns expert_group_runs(int32_t ep, int32_t etp, int32_t tp, int32_t cp) {
  ExpertGroupRuns runs;
  if (etp == tp && tp > 1) {  // experts split like the MLP
    runs.context = std::min(cp, ep);
    runs.tensor_slots = tp;
    return runs;
  }
  const int32_t group = ep * etp;
  runs.tensor = runs.tensor_slots = std::min(tp, group);
  runs.context = group >= tp ? std::min(cp, group / tp) : 1;
  return runs;
}

}  // namespace pipetwin
