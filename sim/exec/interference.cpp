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

// The delays the rule gives each op for the overlaps it had at `times`: an op of base
// duration w that spends a fraction f of its time overlapped, losing a fraction g of its
// speed there, takes d = w / (1 - g f), so its delay is w g f / (1 - g f). Pairs and
// groups share the larger of their members' so that they keep one start and end.
std::vector<double> delays_for(const Program& program, const InterferenceSpec& spec,
                               const ExecutionTimes& times) {
  const std::vector<double> overlap = interference_overlap(program, times);
  std::vector<double> delay(program.size(), 0.0);
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& ins = program.instructions[i];
    const Activity activity = activity_of(ins.op);
    const double lost = activity == Activity::kCompute         ? spec.compute_slowdown
                        : activity == Activity::kCommunication ? spec.transfer_slowdown
                                                               : 0.0;
    const double duration = times.end_s[i] - times.start_s[i];
    if (lost == 0 || !(duration > 0)) continue;
    const double base = std::max(0.0, duration - ins.interference_s);
    const double slowed = lost * std::min(1.0, overlap[i] / duration);
    delay[i] = base * slowed / (1 - slowed);
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
  if (!cluster.interference.any()) return result;  // every interference_s stays 0
  for (Instruction& ins : program.instructions) ins.interference_s = 0;
  for (; result.rounds < max_rounds; ++result.rounds) {
    const ExecutionTimes times = run_analytic(program, cluster);
    const std::vector<double> target = delays_for(program, cluster.interference, times);
    // Undamped first (the overlapped fractions settle within a few rounds); damped later,
    // in case two ops' overlaps keep pushing each other back and forth.
    const double keep = result.rounds < max_rounds / 2 ? 0.0 : 0.5;
    result.last_change_s = 0;
    for (int32_t i = 0; i < program.size(); ++i) {
      double& delay = program.instructions[i].interference_s;
      const double next = keep * delay + (1 - keep) * target[i];
      result.last_change_s = std::max(result.last_change_s, std::abs(next - delay));
      delay = next;
    }
    if (result.last_change_s <= 1e-12 * std::max(times.span_s(), 1e-12)) {
      ++result.rounds;
      break;
    }
  }
  return result;
}

}  // namespace pipetwin
