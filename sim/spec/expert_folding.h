// MoE parallel folding's layout rule (Megatron-Core): the experts' ETP x EP GPUs tile the
// tensor x context x data-parallel GPUs of a stage; pipetwin folds expert groups over whole
// replicas of the attention's layout (whole tensor x context blocks). Shared by the scenario's
// checks and tune's search.
#pragma once

#include <cstdint>

namespace pipetwin {

enum class ExpertFolding {
  kFits,
  kDoesNotDivide,   // EP x ETP does not divide TP x CP x DP
  kSplitsReplicas,  // EP x ETP is not a multiple of TP x CP
};

inline ExpertFolding expert_folding(int64_t ep, int64_t etp, int64_t tp, int64_t cp, int64_t dp) {
  if (ep == 1 && etp == tp) return ExpertFolding::kFits;  // dense, or split like the MLP
  const int64_t group = ep * etp, block = tp * cp;
  if (block * dp % group != 0) return ExpertFolding::kDoesNotDivide;
  if (group % block != 0) return ExpertFolding::kSplitsReplicas;
  return ExpertFolding::kFits;
}

}  // namespace pipetwin
