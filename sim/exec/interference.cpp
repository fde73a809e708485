#include "sim/exec/interference.h"

#include <algorithm>
#include <cmath>

#include "sim/exec/analytic_executor.h"

namespace pipetwin {

Activity activity_of(Op op) {
  if (is_transfer(op) || is_collective(op)) return Activity::kCommunication;
  if (is_copy(op)) return Activity::kNeither;  // DMA engines, not the device's cores
  return Activity::kCompute;
}

void BusyIntervals::add(int32_t device, double start, double end) {
  if (end > start) intervals_[device].emplace_back(start, end);
}

void BusyIntervals::finish() {
  for (auto& list : intervals_) {
    std::sort(list.begin(), list.end());
    std::vector<std::pair<double, double>> merged;
    for (const auto& interval : list) {
      if (!merged.empty() && interval.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, interval.second);
      } else {
        merged.push_back(interval);
      }
    }
    list = std::move(merged);
  }
}

double BusyIntervals::overlap(int32_t device, double start, double end) const {
  const auto& list = intervals_[device];
  // The first merged interval that ends after `start`.
  auto it =
      std::upper_bound(list.begin(), list.end(), start,
                       [](double t, const std::pair<double, double>& iv) { return t < iv.second; });
  double covered = 0;
  for (; it != list.end() && it->first < end; ++it) {
    covered += std::min(end, it->second) - std::max(start, it->first);
  }
  return covered;
}

std::vector<double> interference_overlap(const Program& program, const ExecutionTimes& times) {
  BusyIntervals compute(program.num_devices), communication(program.num_devices);
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& ins = program.instructions[i];
    const Activity activity = activity_of(ins.op);
    if (activity == Activity::kCompute) compute.add(ins.device, times.start_s[i], times.end_s[i]);
    if (activity == Activity::kCommunication) {
      communication.add(ins.device, times.start_s[i], times.end_s[i]);
    }
  }
  compute.finish();
  communication.finish();
  std::vector<double> overlap(program.size(), 0.0);
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& ins = program.instructions[i];
    const double s = times.start_s[i], e = times.end_s[i];
    switch (activity_of(ins.op)) {
      case Activity::kCompute:
        overlap[i] = communication.overlap(ins.device, s, e);
        break;
      case Activity::kCommunication:
        overlap[i] = compute.overlap(ins.device, s, e);
        if (is_transfer(ins.op)) {
          overlap[i] = std::max(overlap[i], compute.overlap(ins.peer_device, s, e));
        }
        break;
      case Activity::kNeither:
        break;
    }
  }
  return overlap;
}

namespace {

// The rule's delays for overlaps `overlap`: pairs and groups share the larger of their
// members' so that they keep one start and end.
std::vector<double> delays_for(const Program& program, const InterferenceSpec& spec,
                               const std::vector<double>& overlap) {
  std::vector<double> delay(program.size(), 0.0);
  for (int32_t i = 0; i < program.size(); ++i) {
    const Activity activity = activity_of(program.instructions[i].op);
    if (activity == Activity::kCompute) delay[i] = spec.compute_slowdown * overlap[i];
    if (activity == Activity::kCommunication) delay[i] = spec.transfer_slowdown * overlap[i];
  }
  for (int32_t i = 0; i < program.size(); ++i) {
    const int32_t j = program.partner[i];
    if (j >= 0 && is_send(program.instructions[i].op)) {
      delay[i] = delay[j] = std::max(delay[i], delay[j]);
    }
  }
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    double longest = 0;
    for (int32_t m : program.members_of_group(g)) longest = std::max(longest, delay[m]);
    for (int32_t m : program.members_of_group(g)) delay[m] = longest;
  }
  return delay;
}

}  // namespace

InterferenceFixedPoint apply_interference(Program& program, const ClusterSpec& cluster,
                                          int32_t max_rounds) {
  InterferenceFixedPoint result;
  for (Instruction& ins : program.instructions) ins.interference_s = 0;
  if (!cluster.interference.any()) return result;
  for (; result.rounds < max_rounds; ++result.rounds) {
    const ExecutionTimes times = run_analytic(program, cluster);
    const std::vector<double> target =
        delays_for(program, cluster.interference, interference_overlap(program, times));
    // Damped: a longer op overlaps more, which can overshoot and oscillate undamped.
    result.last_change_s = 0;
    for (int32_t i = 0; i < program.size(); ++i) {
      double& delay = program.instructions[i].interference_s;
      const double next = result.rounds == 0 ? target[i] : 0.5 * (delay + target[i]);
      result.last_change_s = std::max(result.last_change_s, std::abs(next - delay));
      delay = next;
    }
    const double makespan = times.span_s();
    if (result.last_change_s <= 1e-12 * std::max(makespan, 1e-12)) {
      ++result.rounds;
      break;
    }
  }
  return result;
}

}  // namespace pipetwin
