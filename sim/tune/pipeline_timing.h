// One pipeline replica's compute order, timed in max-plus algebra from each pass's time and
// each cut's transfer time: every pass starts when its device is free and its input has
// arrived. This is what `pipetwin tune` times thousands of configurations with, instead of a
// whole Program; the analytic engine adds what it leaves out (a transfer holding its sender's
// and receiver's lanes, the data-parallel lane), docs/tune.md says by how much.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/schedule/compute_order.h"

namespace pipetwin {

// Per model chunk (a pipeline stage, or a virtual stage of an interleaved or V schedule).
struct ChunkPassTimes {
  int32_t device = 0;
  double fwd_s = 0;
  double bwd_s = 0;  // a whole backward (Op::kBwd)
  double bwd_input_s = 0;
  double bwd_weight_s = 0;
  // Memory (bytes per microbatch, rounded as lowering rounds them): F allocates the stash when
  // it starts, a whole backward frees it when it ends, a split one frees all but the weight
  // gradient's share, which W frees.
  int64_t stash_bytes = 0;
  int64_t weight_stash_bytes = 0;
  // The receive buffer of a pass's input from another device: F's activation from the chunk
  // before, a backward's gradient from the chunk after; held from when its transfer starts
  // (its producer's end) until the pass ends, as the memory curve holds a RECV's payload.
  int64_t fwd_input_bytes = 0;
  int64_t bwd_input_bytes = 0;
};

struct PipelinePasses {
  int32_t devices = 0;
  std::vector<ChunkPassTimes> chunks;
  std::vector<double> forward_transfer_s;   // cut c -> c+1, chunks - 1 entries
  std::vector<double> backward_transfer_s;  // cut c+1 -> c
};

struct PipelineTiming {
  std::vector<double> device_end_s;         // each device's last pass
  std::vector<double> last_backward_end_s;  // each chunk's last backward (B, or its last W)
  std::vector<double> last_backward_s;      // how long that backward ran
  // Per device, the most stash and receive buffers it holds at once (frees first at a tie).
  std::vector<int64_t> peak_activation_bytes;
};

// Throws std::logic_error when a pass waits for an input that its order never produces.
PipelineTiming time_pipeline(const ComputeOrder& order, int32_t microbatches,
                             const PipelinePasses& passes);

}  // namespace pipetwin
