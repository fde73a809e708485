// How an expert group's all-to-alls move tokens (model.zoo.moe.dispatcher): what the network
// model needs to price a dispatch or a combine (sim/network/expert_exchange.h).
#pragma once

#include <cstdint>

namespace pipetwin {

struct ExpertDispatch {
  enum class Kind {
    // Every (token, expert) copy sent to its expert's GPU: NCCL's all-to-all, whose PXN
    // aggregates what goes to another NVLink domain on the GPU of the same rail there.
    kAllToAll,
    // DeepSeek's DeepEP (and NVIDIA's HybridEP, which moves the same bytes): a token crosses
    // the network once per NVLink domain its experts are in (at most max_nodes_per_token of
    // them), to the GPU of its rail, which forwards it to the experts' GPUs over NVLink.
    kDeepEp,
    // Megatron-Core's allgather dispatcher: every GPU gathers the whole group's tokens (one
    // copy each, whatever top_k) and keeps those of its experts; the combine reduce-scatters
    // the results back.
    kAllGather,
  };
  Kind kind = Kind::kAllToAll;
  int32_t top_k = 1;
  int32_t experts = 1;
  int32_t max_nodes_per_token = 0;  // DeepEP's node-limited routing; 0: no limit
};

}  // namespace pipetwin
