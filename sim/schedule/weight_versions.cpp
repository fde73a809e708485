#include "sim/schedule/weight_versions.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace pipetwin {

WeightVersions weight_versions(const Program& program) {
  WeightVersions result;
  result.alive.assign(program.num_stages, 1);
  result.forward_version.assign(program.size(), -1);
  int64_t backwards = 0, staleness_sum = 0;
  // Every device that runs the stage: data-parallel replicas keep versions of their own.
  std::vector<std::pair<int32_t, int32_t>> device_stages;  // (device, stage)
  for (const Instruction& ins : program.instructions) {
    if (ins.op == Op::kFwd) device_stages.emplace_back(ins.device, ins.stage);
  }
  std::sort(device_stages.begin(), device_stages.end());
  device_stages.erase(std::unique(device_stages.begin(), device_stages.end()), device_stages.end());
  for (const auto& [device, s] : device_stages) {
    const int l = device * kLaneCount + static_cast<int>(Lane::kCompute);
    int32_t updates = 0;
    std::map<std::pair<int32_t, int32_t>, std::pair<SampleRange, int32_t>> in_flight;
    std::vector<int32_t> pending;  // versions of the backwards since the last update
    for (int32_t i = program.lane_begin[l]; i < program.lane_begin[l + 1]; ++i) {
      const Instruction& ins = program.instructions[i];
      if (ins.stage != s) continue;
      if (ins.op == Op::kFwd) {
        in_flight[{ins.iteration, ins.range.lo}] = {ins.range, updates};
        result.forward_version[i] = updates;
      } else if (ins.op == Op::kBwd) {
        // The forwards of its samples (one, or several under unequal cuts).
        int32_t version = updates;
        for (auto it = in_flight.begin(); it != in_flight.end();) {
          if (it->first.first == ins.iteration && it->second.first.overlaps(ins.range)) {
            version = std::min(version, it->second.second);
            if (ins.range.lo <= it->second.first.lo && it->second.first.hi <= ins.range.hi) {
              it = in_flight.erase(it);
              continue;
            }
          }
          ++it;
        }
        pending.push_back(version);
      } else if (ins.op == Op::kOptim) {
        for (int32_t v : pending) {
          result.max_staleness = std::max(result.max_staleness, updates - v);
          staleness_sum += updates - v;
          ++backwards;
        }
        pending.clear();
        ++updates;
      }
      std::set<int32_t> versions = {updates};
      for (const auto& [key, forward] : in_flight) versions.insert(forward.second);
      result.alive[s] = std::max(result.alive[s], static_cast<int32_t>(versions.size()));
    }
  }
  result.mean_staleness = backwards > 0 ? static_cast<double>(staleness_sum) / backwards : 0;
  return result;
}

}  // namespace pipetwin
