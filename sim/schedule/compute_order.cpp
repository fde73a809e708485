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
  ComputeOrder order(stages);
  for (int32_t s = 0; s < stages; ++s) {
    const int32_t warmup = std::min(stages - s - 1, microbatches);
    auto& list = order[s];
    for (int32_t m = 0; m < warmup; ++m) list.push_back({Op::kFwd, s, m});
    for (int32_t i = 0; i < microbatches - warmup; ++i) {
      list.push_back({Op::kFwd, s, warmup + i});
      list.push_back({Op::kBwd, s, i});
    }
    for (int32_t m = microbatches - warmup; m < microbatches; ++m) {
      list.push_back({Op::kBwd, s, m});
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
