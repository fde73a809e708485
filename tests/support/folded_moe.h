// A small mixture-of-experts transformer (8 blocks of hidden 512, 16 experts, top-2) on DGX
// H100 nodes, its ranks placed in Megatron-Core's order, in a folded layout: the tests of MoE
// parallel folding's groups (the Program's, tune's fast evaluator's) build it.
#pragma once

#include <string>
#include <vector>

#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin::testing {

struct FoldedLayout {
  int tp, cp, dp, ep, etp, pp;
};

inline std::string describe(const FoldedLayout& l) {
  return "TP " + std::to_string(l.tp) + " CP " + std::to_string(l.cp) + " DP " +
         std::to_string(l.dp) + " EP " + std::to_string(l.ep) + " ETP " + std::to_string(l.etp) +
         " PP " + std::to_string(l.pp);
}

inline ResolvedScenario folded_moe(const FoldedLayout& l,
                                   const std::vector<std::string>& more = {}) {
  const int gpus = l.tp * l.cp * l.dp * l.pp;
  const std::string text = R"(
    cluster { preset: "dgx-h100" nodes: 1 }
    model { zoo { name: "transformer" layers: 8 hidden: 512 heads: 8 kv_heads: 8 ffn_hidden: 1024
                  seq_len: 256 vocab: 1000 efficiency: 0.5
                  moe { experts: 16 top_k: 2 expert_ffn_hidden: 512 } } }
    training { global_batch: 64 microbatches: 4 precision: BF16 mixed_precision: true
               rank_order: TP_CP_EP_DP_PP }
    schedule { kind: ONE_F_ONE_B stages: 1 }
  )";
  std::vector<std::string> overrides = {"cluster.nodes=" + std::to_string((gpus + 7) / 8),
                                        "schedule.stages=" + std::to_string(l.pp),
                                        "training.tensor_parallel=" + std::to_string(l.tp),
                                        "training.context_parallel=" + std::to_string(l.cp),
                                        "training.data_parallel=" + std::to_string(l.dp),
                                        "training.expert_parallel=" + std::to_string(l.ep),
                                        "training.expert_tensor_parallel=" + std::to_string(l.etp)};
  if (l.tp > 1) overrides.push_back("training.sequence_parallel=true");
  overrides.insert(overrides.end(), more.begin(), more.end());
  return resolve_scenario(parse_scenario(text, "folded.textproto", "", false, overrides));
}

}  // namespace pipetwin::testing
