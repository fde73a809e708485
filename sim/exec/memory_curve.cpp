#include "sim/exec/memory_curve.h"

#include <algorithm>

namespace pipetwin {
namespace {

struct Event {
  double time;
  int64_t delta;
  int32_t instruction;
};

// Sorts `events` (frees first at equal times) and turns them into a curve from `base`.
void accumulate(std::vector<Event>& events, int64_t base, MemorySamples& samples,
                MemoryPeak& peak) {
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.delta < b.delta);
  });
  int64_t in_use = base;
  samples.emplace_back(0.0, in_use);
  peak = {in_use, 0.0, -1};
  for (const Event& e : events) {
    in_use += e.delta;
    if (samples.back().first == e.time) {
      samples.back().second = in_use;
    } else {
      samples.emplace_back(e.time, in_use);
    }
    if (in_use > peak.bytes) peak = {in_use, e.time, e.instruction};
  }
}

// The compute op that consumes a RECV's payload (the first to list it).
int32_t consumer_of(const Program& program, int32_t recv) {
  for (int32_t d : program.dependents_of(recv)) {
    if (program.instructions[d].lane() == Lane::kCompute) return d;
  }
  return -1;
}

// A weight version's copy back from host memory, and when its last BWD ends.
int32_t reload_of(const Program& program, int32_t offload) {
  for (int32_t d : program.dependents_of(offload)) {
    if (program.instructions[d].op == Op::kReloadWeights) return d;
  }
  return -1;
}
double last_user_end(const Program& program, const ExecutionTimes& times, int32_t reload) {
  double end = times.end_s[reload];
  for (int32_t d : program.dependents_of(reload)) {
    if (program.instructions[d].lane() == Lane::kCompute) end = std::max(end, times.end_s[d]);
  }
  return end;
}

}  // namespace

MemoryCurve memory_curve(const Program& program, const ExecutionTimes& times) {
  std::vector<std::vector<Event>> device(program.num_devices), host(program.num_devices);
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& instr = program.instructions[i];
    auto& events = device[instr.device];
    switch (instr.op) {
      case Op::kFwd:
        if (instr.stash_bytes > 0) events.push_back({times.start_s[i], instr.stash_bytes, i});
        break;
      case Op::kBwd:
      case Op::kBwdInput:   // frees what the weight gradients do not need (with full
                            // recomputation, holds what it rebuilt for them: negative) ...
      case Op::kBwdWeight:  // ... and the rest
        if (instr.stash_bytes != 0) events.push_back({times.end_s[i], -instr.stash_bytes, i});
        break;
      case Op::kSendStash:  // the stash has left the forward device
        if (instr.stash_bytes > 0) events.push_back({times.end_s[i], -instr.stash_bytes, i});
        break;
      case Op::kRecvAct:
      case Op::kRecvGrad:
      case Op::kRecvStash:
        if (const int32_t user = consumer_of(program, i); user >= 0 && instr.bytes > 0) {
          events.push_back({times.start_s[i], instr.bytes, i});
          events.push_back({times.end_s[user], -instr.bytes, user});
        }
        break;
      case Op::kOffload:
        events.push_back({times.end_s[i], -instr.bytes, i});
        host[instr.device].push_back({times.start_s[i], instr.bytes, i});
        break;
      case Op::kReload:
        events.push_back({times.start_s[i], instr.bytes, i});
        host[instr.device].push_back({times.end_s[i], -instr.bytes, i});
        break;
      // A weight version is copied out of the live weights, which stay: the device frees
      // nothing. It is held on the host until its copy back has ended, then on the device
      // until the last BWD that uses it ends.
      case Op::kOffloadWeights:
        if (const int32_t reload = reload_of(program, i); reload >= 0) {
          host[instr.device].push_back({times.start_s[i], instr.bytes, i});
          host[instr.device].push_back({times.end_s[reload], -instr.bytes, reload});
        }
        break;
      case Op::kReloadWeights:
        events.push_back({times.start_s[i], instr.bytes, i});
        events.push_back({last_user_end(program, times, i), -instr.bytes, i});
        break;
      default:
        break;
    }
  }
  MemoryCurve curve;
  curve.samples.resize(program.num_devices);
  curve.peaks.resize(program.num_devices);
  curve.host_samples.resize(program.num_devices);
  curve.host_peaks.resize(program.num_devices);
  for (int32_t d = 0; d < program.num_devices; ++d) {
    accumulate(device[d], program.static_bytes[d], curve.samples[d], curve.peaks[d]);
    accumulate(host[d], 0, curve.host_samples[d], curve.host_peaks[d]);
  }
  return curve;
}

MemoryPeak combined_peak(const std::vector<const MemorySamples*>& curves) {
  std::vector<Event> events;
  int64_t base = 0;
  for (const MemorySamples* curve : curves) {
    int64_t previous = 0;
    for (size_t k = 0; k < curve->size(); ++k) {
      const auto& [time, bytes] = (*curve)[k];
      if (k == 0) {
        base += bytes;
      } else {
        events.push_back({time, bytes - previous, -1});
      }
      previous = bytes;
    }
  }
  MemorySamples samples;
  MemoryPeak peak;
  accumulate(events, base, samples, peak);
  return peak;
}

}  // namespace pipetwin
