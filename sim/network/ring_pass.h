// One pass around a ring: n-1 lock-step steps, in each of which every member sends one chunk
// of ceil(bytes / n) to the next member. A reduce-scatter (each chunk a partial sum) and an
// all-gather (each chunk a finished shard) move exactly this; they differ only in name.
//   time = (n-1) * max over ring links (latency + chunk / bandwidth)
// which on identical links is (n-1)/n * bytes/bandwidth + (n-1) * latency.
#pragma once

#include <string_view>

#include "sim/network/collective_algorithm.h"

namespace pipetwin {

class RingPass final : public CollectiveAlgorithm {
 public:
  explicit RingPass(std::string_view name) : name_(name) {}
  std::string_view name() const override { return name_; }
  double uniform_seconds(double bytes, int32_t ranks, const LinkSpec& link) const override;
  CollectiveSchedule schedule(const ClusterSpec& cluster, std::span<const int32_t> group,
                              int64_t bytes) const override;

 private:
  std::string_view name_;
};

}  // namespace pipetwin
