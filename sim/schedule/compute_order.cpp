#include "sim/schedule/compute_order.h"

#include <algorithm>

namespace pipetwin {

ComputeOrder gpipe_order(int32_t stages, int32_t microbatches) {
  return flush_order(std::vector<int32_t>(stages, microbatches),
                     std::vector<int32_t>(stages, microbatches));
}

ComputeOrder flush_order(const std::vector<int32_t>& forward_counts,
                         const std::vector<int32_t>& backward_counts) {
  const int32_t stages = static_cast<int32_t>(forward_counts.size());
  ComputeOrder order(stages);
  for (int32_t s = 0; s < stages; ++s) {
    for (int32_t m = 0; m < forward_counts[s]; ++m) order[s].push_back({Op::kFwd, s, m});
    for (int32_t m = 0; m < backward_counts[s]; ++m) order[s].push_back({Op::kBwd, s, m});
  }
  return order;
}

ComputeOrder one_f_one_b_order(int32_t stages, int32_t microbatches) {
  return one_f_one_b_order(StageReplicas(stages), microbatches);
}

namespace {

// The microbatches replica k of stage s runs, in order.
std::vector<int32_t> owned(const StageReplicas& replicas, int32_t s, int32_t k,
                           int32_t microbatches) {
  std::vector<int32_t> mine;
  for (int32_t m = k; m < microbatches; m += replicas.replicas(s)) mine.push_back(m);
  return mine;
}

}  // namespace

ComputeOrder gpipe_order(const StageReplicas& replicas, int32_t microbatches) {
  ComputeOrder order;
  for (int32_t s = 0; s < replicas.stages(); ++s) {
    for (int32_t k = 0; k < replicas.replicas(s); ++k) {
      auto& list = order.emplace_back();
      const std::vector<int32_t> mine = owned(replicas, s, k, microbatches);
      for (int32_t m : mine) list.push_back({Op::kFwd, s, m});
      for (int32_t m : mine) list.push_back({Op::kBwd, s, m});
    }
  }
  return order;
}

ComputeOrder one_f_one_b_order(const StageReplicas& replicas, int32_t microbatches) {
  ComputeOrder order;
  for (int32_t s = 0; s < replicas.stages(); ++s) {
    for (int32_t k = 0; k < replicas.replicas(s); ++k) {
      auto& list = order.emplace_back();
      const std::vector<int32_t> mine = owned(replicas, s, k, microbatches);
      const int32_t n = static_cast<int32_t>(mine.size());
      const int32_t warmup = std::min(replicas.in_flight(s) - 1, n);
      for (int32_t i = 0; i < warmup; ++i) list.push_back({Op::kFwd, s, mine[i]});
      for (int32_t i = 0; i < n - warmup; ++i) {
        list.push_back({Op::kFwd, s, mine[warmup + i]});
        list.push_back({Op::kBwd, s, mine[i]});
      }
      for (int32_t i = n - warmup; i < n; ++i) list.push_back({Op::kBwd, s, mine[i]});
    }
  }
  return order;
}

ComputeOrder interleaved_order(int32_t devices, int32_t virtual_stages, int32_t microbatches) {
  if (virtual_stages == 1) return one_f_one_b_order(devices, microbatches);
  const int32_t total = microbatches * virtual_stages;  // forward actions per device
  const int32_t group = devices * virtual_stages;
  // The k-th forward (backward) action of a device: microbatches advance in groups of
  // `devices`, cycling through the chunks; backwards visit chunks in reverse.
  auto action = [&](int32_t device, int32_t k, Op op) {
    const int32_t chunk_in_group = (k % group) / devices;
    const int32_t chunk = op == Op::kFwd ? chunk_in_group : virtual_stages - 1 - chunk_in_group;
    const int32_t microbatch = (k / group) * devices + k % devices;
    return ComputeAction{op, chunk * devices + device, microbatch};
  };
  ComputeOrder order(devices);
  for (int32_t d = 0; d < devices; ++d) {
    const int32_t warmup = std::min(total, (devices - d - 1) * 2 + (virtual_stages - 1) * devices);
    auto& list = order[d];
    for (int32_t k = 0; k < warmup; ++k) list.push_back(action(d, k, Op::kFwd));
    for (int32_t i = 0; i < total - warmup; ++i) {
      list.push_back(action(d, warmup + i, Op::kFwd));
      list.push_back(action(d, i, Op::kBwd));
    }
    for (int32_t k = total - warmup; k < total; ++k) list.push_back(action(d, k, Op::kBwd));
  }
  return order;
}

}  // namespace pipetwin
