#include "sim/exec/ring_allreduce.h"

#include <algorithm>

namespace pipetwin {

double ring_allreduce_seconds(const ClusterSpec& cluster, std::span<const int32_t> devices,
                              int64_t bytes, int32_t collectives) {
  const int32_t n = static_cast<int32_t>(devices.size());
  if (n < 2) return 0;
  const double chunk = static_cast<double>(ring_chunk_bytes(bytes, n * collectives));
  double step = 0;
  for (int32_t k = 0; k < n; ++k) {
    step = std::max(step, cluster.link(devices[k], devices[(k + 1) % n]).transfer_seconds(chunk));
  }
  return 2.0 * (n - 1) * collectives * step;
}

}  // namespace pipetwin
