#include "backend/common/expert_folding_ranks.h"

namespace pipetwin {
namespace {

// A stage's tensor x data-parallel ranks in Megatron-Core's order: L = t + T d.
int32_t stage_index(int rank, const ExpertFolding& f) {
  return rank % f.tensor + f.tensor * (rank / f.per_replica);
}

}  // namespace

ExpertPlace expert_place(int rank, const ExpertFolding& f) {
  const int32_t folded = stage_index(rank, f) / f.expert_tensor;
  return {folded % f.expert, folded / f.expert};
}

std::vector<int> expert_parallel_ranks(int rank, const ExpertFolding& f) {
  const int32_t index = stage_index(rank, f);
  const int32_t stage_place = rank % f.per_replica - rank % f.tensor;  // T s
  const int32_t inner = index % f.expert_tensor;
  const int32_t first = index / (f.expert_tensor * f.expert) * f.expert;
  std::vector<int> ranks;
  for (int32_t e = first; e < first + f.expert; ++e) {
    const int32_t member = inner + f.expert_tensor * e;  // its L
    ranks.push_back(member % f.tensor + stage_place + f.per_replica * (member / f.tensor));
  }
  return ranks;
}

}  // namespace pipetwin
