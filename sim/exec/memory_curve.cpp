#include "sim/exec/memory_curve.h"

#include <algorithm>

namespace pipetwin {

MemoryCurve memory_curve(const Program& program, const ExecutionTimes& times) {
  struct Event {
    double time;
    int64_t delta;
    int32_t instruction;
  };
  std::vector<std::vector<Event>> events(program.num_devices);
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& instr = program.instructions[i];
    if (instr.stash_bytes == 0) continue;
    if (instr.op == Op::kFwd)
      events[instr.device].push_back({times.start_s[i], instr.stash_bytes, i});
    if (instr.op == Op::kBwd)
      events[instr.device].push_back({times.end_s[i], -instr.stash_bytes, i});
  }

  MemoryCurve curve;
  curve.samples.resize(program.num_devices);
  curve.peaks.resize(program.num_devices);
  for (int32_t d = 0; d < program.num_devices; ++d) {
    auto& list = events[d];
    std::stable_sort(list.begin(), list.end(), [](const Event& a, const Event& b) {
      return a.time < b.time || (a.time == b.time && a.delta < b.delta);
    });
    int64_t in_use = program.static_bytes[d];
    auto& samples = curve.samples[d];
    samples.emplace_back(0.0, in_use);
    curve.peaks[d] = {in_use, 0.0, -1};
    for (const Event& e : list) {
      in_use += e.delta;
      if (samples.back().first == e.time) {
        samples.back().second = in_use;
      } else {
        samples.emplace_back(e.time, in_use);
      }
      if (in_use > curve.peaks[d].bytes) curve.peaks[d] = {in_use, e.time, e.instruction};
    }
  }
  return curve;
}

}  // namespace pipetwin
