#include "sim/tune/pipeline_timing.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace pipetwin {
namespace {

constexpr double kNotTimedYet = std::numeric_limits<double>::infinity();

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

double collectives_after(const ChunkPassTimes& c, Op op) {
  switch (op) {
    case Op::kFwd:
      return c.fwd_after_s;
    case Op::kBwd:
      return c.bwd_after_s;
    case Op::kBwdInput:
      return c.bwd_input_after_s;
    default:
      return 0;
  }
}

// ZeRO-3's gathers of the weights a pass needs: its first layer, then the others.
std::pair<double, double> gathers_of(const ChunkPassTimes& c, Op op) {
  switch (op) {
    case Op::kFwd:
      return {c.fwd_gather_first_s, c.fwd_gather_rest_s};
    case Op::kBwd:
    case Op::kBwdInput:
      return {c.bwd_gather_first_s, c.bwd_gather_rest_s};
    default:
      return {0, 0};
  }
}

// What a pass frees of its chunk's stash when it ends (F frees nothing).
int64_t stash_freed(const ChunkPassTimes& c, Op op) {
  switch (op) {
    case Op::kBwd:
      return c.stash_bytes;
    case Op::kBwdInput:
      return c.stash_bytes - c.weight_stash_bytes;
    case Op::kBwdWeight:
      return c.weight_stash_bytes;
    default:
      return 0;
  }
}

// The most a device holds at once, frees before allocations at equal times (as the memory
// curve orders them: a caching allocator hands the memory over).
int64_t peak_of(std::vector<std::pair<double, int64_t>>& events) {
  std::sort(events.begin(), events.end());
  int64_t held = 0, peak = 0;
  for (const auto& [time, bytes] : events) {
    held += bytes;
    peak = std::max(peak, held);
  }
  return peak;
}

}  // namespace

PipelineTiming time_pipeline(const ComputeOrder& order, int32_t microbatches,
                             const PipelinePasses& passes) {
  const int32_t chunks = static_cast<int32_t>(passes.chunks.size());
  const int32_t devices = passes.devices;
  // End of every F and of every input-gradient backward, per (chunk, microbatch).
  std::vector<double> fwd_end(static_cast<size_t>(chunks) * microbatches, kNotTimedYet);
  std::vector<double> bwd_end(fwd_end.size(), kNotTimedYet);       // with its collectives
  std::vector<double> bwd_computed(fwd_end.size(), kNotTimedYet);  // its compute alone
  const auto at = [&](int32_t c, int32_t m) { return static_cast<size_t>(c) * microbatches + m; };

  PipelineTiming timing;
  timing.device_end_s.assign(devices, 0.0);
  timing.last_backward_end_s.assign(chunks, 0.0);
  timing.last_backward_ready_s.assign(chunks, 0.0);
  timing.peak_activation_bytes.assign(devices, 0);
  std::vector<std::vector<std::pair<double, int64_t>>> events(devices);
  std::vector<size_t> next(devices, 0);
  std::vector<double> recv_free(devices, 0.0);
  std::vector<double> compute_free(devices, 0.0), collective_free(devices, 0.0);
  // When the collectives end that the op after each device's next must wait for (of a pass
  // the next op runs under), and those its next op must wait for that way.
  std::vector<double> gate_previous(devices, 0.0), gate_before(devices, 0.0);
  // The data-parallel lane: where it is free, and when the gathers of each device's next pass
  // end (its first layer, and the rest).
  timing.data_parallel_free_s.assign(devices, 0.0);
  timing.last_scatter_end_s.assign(chunks, 0.0);
  std::vector<double> gathered_first(devices, 0.0), gathered_rest(devices, 0.0);
  // The gathers of the pass at `index` of device d's order: its first layer, issued when the
  // op before it ends; its other layers, after what the lane holds by then.
  const auto gather_first_of = [&](int32_t d, size_t index, double issued) {
    gathered_first[d] = gathered_rest[d] = 0;
    if (index >= order[d].size()) return;
    const ComputeAction& n = order[d][index];
    double& lane = timing.data_parallel_free_s[d];
    if (const double first = gathers_of(passes.chunks[n.stage], n.op).first; first > 0) {
      gathered_first[d] = lane = std::max(lane, issued) + first;
    }
  };
  const auto gather_rest_of = [&](int32_t d, size_t index) {
    if (index >= order[d].size()) return;
    const ComputeAction& n = order[d][index];
    double& lane = timing.data_parallel_free_s[d];
    if (const double rest = gathers_of(passes.chunks[n.stage], n.op).second; rest > 0) {
      gathered_rest[d] = lane = lane + rest;
    }
  };
  // Sweep the devices until none advances: a pass waits for its device and its input.
  for (bool advanced = true; advanced;) {
    advanced = false;
    for (int32_t d = 0; d < devices; ++d) {
      for (; next[d] < order[d].size(); ++next[d]) {
        const ComputeAction& a = order[d][next[d]];
        const int32_t c = a.stage, m = a.microbatch;
        const ChunkPassTimes& chunk = passes.chunks[c];
        double input = 0, sent = 0;  // when the input arrives, and when its transfer started
        double transfer = -1;        // the input's transfer from another chunk; -1: none
        int64_t buffer = 0;
        if (a.op == Op::kFwd) {
          if (!chunk.first) {
            sent = input = fwd_end[at(c - 1, m)];
            transfer = passes.forward_transfer_s[c - 1];
          }
          buffer = chunk.fwd_input_bytes;
        } else if (a.op == Op::kBwd || a.op == Op::kBwdInput) {
          sent = input = chunk.last ? fwd_end[at(c, m)] : bwd_end[at(c + 1, m)];
          if (!chunk.last) transfer = passes.backward_transfer_s[c];
          buffer = chunk.bwd_input_bytes;
        } else {
          input = bwd_computed[at(c, m)];  // W after its own B's compute
        }
        if (input == kNotTimedYet) break;
        if (buffer > 0 && transfer >= 0) {
          // A device receives its inputs one at a time, in the order it consumes them.
          sent = std::max(sent, recv_free[d]);
          recv_free[d] = input = sent + transfer;
        } else if (transfer >= 0) {
          input = sent + transfer;
        }
        const double seconds = pass_seconds(chunk, a.op);
        if (next[d] == 0) {  // the first pass's gathers are issued at the start
          gather_first_of(d, 0, 0.0);
          gather_rest_of(d, 0);
        }
        const double start = std::max({compute_free[d], input, gate_before[d], gathered_first[d]});
        const double end = start + seconds;  // its compute
        double ready = end;                  // and its collectives, which its consumers wait for
        if (const double after = collectives_after(chunk, a.op); after > 0) {
          ready = std::max(end, collective_free[d]) + after;
          collective_free[d] = ready;
        }
        ready = std::max(ready, gathered_rest[d]);
        // After its compute, on the data-parallel lane: the next pass's first layer, this
        // pass's reduce-scatter, the next pass's other layers.
        gather_first_of(d, next[d] + 1, end);
        if (a.op == Op::kBwd || a.op == Op::kBwdWeight) {
          double& lane = timing.data_parallel_free_s[d];
          for (const auto& [lead, piece] : chunk.scatter_pieces) {
            lane = std::max(lane, end - lead * seconds) + piece;
          }
          if (!chunk.scatter_pieces.empty()) timing.last_scatter_end_s[c] = lane;
        }
        gather_rest_of(d, next[d] + 1);
        // The next op waits for this pass's collectives unless it runs under them, and for
        // those of the pass before, under which this one ran; the op after it then waits.
        const Op* following = next[d] + 1 < order[d].size() ? &order[d][next[d] + 1].op : nullptr;
        const bool overlaps = expert_exchange_overlaps(passes.expert_overlap, a.op, following);
        compute_free[d] = overlaps ? end : ready;
        gate_before[d] = gate_previous[d];
        gate_previous[d] = overlaps ? ready : 0.0;
        timing.device_end_s[d] = std::max(timing.device_end_s[d], ready);
        if (buffer > 0) {
          events[d].push_back({sent, buffer});
          events[d].push_back({end, -buffer});
        }
        if (a.op == Op::kFwd) {
          fwd_end[at(c, m)] = ready;
          if (chunk.stash_bytes > 0) events[d].push_back({start, chunk.stash_bytes});
        } else {
          if (const int64_t freed = stash_freed(chunk, a.op); freed != 0) {
            events[d].push_back({end, -freed});
          }
          if (a.op != Op::kBwdWeight) {
            bwd_end[at(c, m)] = ready;
            bwd_computed[at(c, m)] = end;
          }
          if (a.op != Op::kBwdInput) {
            timing.last_backward_end_s[c] = end;
            timing.last_backward_ready_s[c] = ready;
          }
        }
        advanced = true;
      }
    }
  }
  for (int32_t d = 0; d < devices; ++d) timing.peak_activation_bytes[d] = peak_of(events[d]);
  for (int32_t d = 0; d < devices; ++d) {
    if (next[d] < order[d].size()) {
      throw std::logic_error("time_pipeline: device " + std::to_string(d) +
                             " waits for an input that never comes");
    }
  }
  return timing;
}

}  // namespace pipetwin
