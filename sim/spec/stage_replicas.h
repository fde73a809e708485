// Per-stage replication (schedule.stage_replicas), PipeDream's hybrid plans: stage s runs
// on replicas(s) devices of its own, numbered stage-major (stage 0's replicas first, then
// stage 1's, ...). A stage's replicas take whole microbatches round robin, so each runs
// 1 / replicas(s) of the stage's work, and all-reduce their gradients among themselves
// before each update.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace pipetwin {

class StageReplicas {
 public:
  // One device per stage.
  explicit StageReplicas(int32_t stages) : StageReplicas(std::vector<int32_t>(stages, 1)) {}
  // `counts`: per stage, at least 1.
  explicit StageReplicas(std::vector<int32_t> counts) : counts_(std::move(counts)) {
    int32_t device = 0;
    for (int32_t count : counts_) {
      first_.push_back(device);
      device += count;
    }
    devices_ = device;
  }
  // schedule.stage_replicas as the resolver keeps it: empty when the scenario has none.
  static StageReplicas of(const std::vector<int32_t>& counts, int32_t stages) {
    return counts.empty() ? StageReplicas(stages) : StageReplicas(counts);
  }

  int32_t stages() const { return static_cast<int32_t>(counts_.size()); }
  int32_t replicas(int32_t stage) const { return counts_[stage]; }
  int32_t first_device(int32_t stage) const { return first_[stage]; }
  int32_t devices() const { return devices_; }  // over all stages
  // Whether some stage runs on more than one device.
  bool replicated() const { return devices_ > stages(); }

  // The replica that runs microbatch `j` of the stage: round robin.
  int32_t replica_of(int32_t stage, int64_t j) const {
    return static_cast<int32_t>(j % counts_[stage]);
  }
  int32_t device_of(int32_t stage, int64_t j) const { return first_[stage] + replica_of(stage, j); }
  // PipeDream's NOAM per replica: the microbatches one replica of the stage keeps in flight
  // so that every device from it to the end of the pipeline has work,
  // ceil(devices from this stage on / replicas). One device per stage: 1F1B's K - s.
  int32_t in_flight(int32_t stage) const {
    const int32_t downstream = devices_ - first_[stage];
    return (downstream + counts_[stage] - 1) / counts_[stage];
  }

 private:
  std::vector<int32_t> counts_;
  std::vector<int32_t> first_;
  int32_t devices_ = 0;
};

}  // namespace pipetwin
