#include "sim/tune/pipeline_timing.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace pipetwin {
namespace {

constexpr double kUnknown = std::numeric_limits<double>::infinity();

double pass_seconds(const ChunkPassTimes& c, Op op) {
  switch (op) {
    case Op::kFwd:
      return c.fwd_s;
    case Op::kBwd:
      return c.bwd_s;
    case Op::kBwdInput:
      return c.bwd_input_s;
    default:
      return c.bwd_weight_s;
  }
}

double stash_change(const ChunkPassTimes& c, Op op) {
  switch (op) {
    case Op::kFwd:
      return c.stash_bytes;
    case Op::kBwd:
      return -c.stash_bytes;
    case Op::kBwdInput:
      return -(c.stash_bytes - c.weight_stash_bytes);
    default:
      return -c.weight_stash_bytes;
  }
}

}  // namespace

PipelineTiming time_pipeline(const ComputeOrder& order, int32_t microbatches,
                             const PipelinePasses& passes) {
  const int32_t chunks = static_cast<int32_t>(passes.chunks.size());
  const int32_t devices = passes.devices;
  // End of every F and of every input-gradient backward, per (chunk, microbatch).
  std::vector<double> fwd_end(static_cast<size_t>(chunks) * microbatches, kUnknown);
  std::vector<double> bwd_end(fwd_end.size(), kUnknown);
  const auto at = [&](int32_t c, int32_t m) { return static_cast<size_t>(c) * microbatches + m; };

  PipelineTiming timing;
  timing.device_end_s.assign(devices, 0.0);
  timing.last_backward_end_s.assign(chunks, 0.0);
  timing.last_backward_s.assign(chunks, 0.0);
  timing.peak_activation_bytes.assign(devices, 0.0);
  std::vector<double> held(devices, 0.0);
  std::vector<size_t> next(devices, 0);
  // Sweep the devices until none advances: a pass waits for its device and its input.
  for (bool advanced = true; advanced;) {
    advanced = false;
    for (int32_t d = 0; d < devices; ++d) {
      for (; next[d] < order[d].size(); ++next[d]) {
        const ComputeAction& a = order[d][next[d]];
        const int32_t c = a.stage, m = a.microbatch;
        double input = 0;
        double buffer = 0;
        const ChunkPassTimes& chunk = passes.chunks[c];
        if (a.op == Op::kFwd) {
          input = c == 0 ? 0.0 : fwd_end[at(c - 1, m)] + passes.forward_transfer_s[c - 1];
          buffer = chunk.fwd_input_bytes;
        } else if (a.op == Op::kBwd || a.op == Op::kBwdInput) {
          input = c + 1 == chunks ? fwd_end[at(c, m)]
                                  : bwd_end[at(c + 1, m)] + passes.backward_transfer_s[c];
          buffer = chunk.bwd_input_bytes;
        } else {
          input = bwd_end[at(c, m)];  // W after its own B
        }
        if (input == kUnknown) break;
        const double seconds = pass_seconds(chunk, a.op);
        const double end = std::max(timing.device_end_s[d], input) + seconds;
        timing.device_end_s[d] = end;
        if (a.op == Op::kFwd) {
          fwd_end[at(c, m)] = end;
          held[d] += stash_change(chunk, a.op);
          timing.peak_activation_bytes[d] =
              std::max(timing.peak_activation_bytes[d], held[d] + buffer);
        } else {
          // A backward holds its stash and its input while it runs, and frees at its end.
          timing.peak_activation_bytes[d] =
              std::max(timing.peak_activation_bytes[d], held[d] + buffer);
          held[d] += stash_change(chunk, a.op);
          if (a.op != Op::kBwdWeight) bwd_end[at(c, m)] = end;
          if (a.op != Op::kBwdInput) {
            timing.last_backward_end_s[c] = end;
            timing.last_backward_s[c] = seconds;
          }
        }
        advanced = true;
      }
    }
  }
  for (int32_t d = 0; d < devices; ++d) {
    if (next[d] < order[d].size()) {
      throw std::logic_error("time_pipeline: device " + std::to_string(d) +
                             " waits for an input that never comes");
    }
  }
  return timing;
}

}  // namespace pipetwin
