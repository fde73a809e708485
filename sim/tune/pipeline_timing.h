// One pipeline replica's compute order, timed in max-plus algebra from each pass's time and
// each cut's transfer time: every pass starts when its device is free and its input has
// arrived. This is what `pipetwin tune` times thousands of configurations with, instead of a
// whole Program; the analytic engine adds what it leaves out (a transfer holding its sender's
// and receiver's lanes, the data-parallel lane), docs/tune.md says by how much.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/schedule/compute_order.h"
#include "sim/schedule/expert_all_to_all.h"

namespace pipetwin {

// Per model chunk (a pipeline stage, or a virtual stage of an interleaved or V schedule).
struct ChunkPassTimes {
  int32_t device = 0;
  // Where a pipeline starts and ends: the first chunk reads the batch, the last one computes
  // the loss. One pipeline has one of each; DualPipe's two have two.
  bool first = false;
  bool last = false;
  // Each pass's compute, and the collectives it triggers on the device's collective lane
  // (tensor parallelism's all-reduces, expert all-to-alls, what context parallelism's
  // exchange adds beyond the attention hiding it, ZeRO-3's gathers), which its consumers wait
  // for.
  double fwd_s = 0;
  double bwd_s = 0;  // a whole backward (Op::kBwd)
  double bwd_input_s = 0;
  double bwd_weight_s = 0;
  double fwd_after_s = 0;
  double bwd_after_s = 0;
  double bwd_input_after_s = 0;
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
  // Sharded data parallelism (ZeRO) on the device's data-parallel lane, which takes them in
  // the order of the compute ops that trigger them (sim/schedule/sharded_data_parallel.h):
  // stage 3 gathers a pass's first layer when the op before it ends (the pass waits for it)
  // and then its other layers (the pass's consumers wait for them), for the forward and for
  // the backward that needs the weights; stages 2 and 3 reduce-scatter the gradients of every
  // pass that computes them, in buckets that start under it (lead as a share of the pass's
  // compute, seconds).
  double fwd_gather_first_s = 0;
  double fwd_gather_rest_s = 0;
  double bwd_gather_first_s = 0;
  double bwd_gather_rest_s = 0;
  std::vector<std::pair<double, double>> scatter_pieces;
};

struct PipelinePasses {
  int32_t devices = 0;
  // Which compute op a pass's expert all-to-alls hold back (sim/schedule/expert_all_to_all.h):
  // its device's next (kNone), or the one after it, the next running under them.
  ExpertOverlap expert_overlap = ExpertOverlap::kNone;
  std::vector<ChunkPassTimes> chunks;
  // Cut c -> c+1 and back, chunks - 1 entries (unused where chunk c is a pipeline's last).
  std::vector<double> forward_transfer_s;
  std::vector<double> backward_transfer_s;
};

struct PipelineTiming {
  std::vector<double> device_end_s;  // each device's last pass and its collectives
  // Each chunk's last weight-gradient pass (B, or its last W): when its compute ends, which is
  // when gradient buckets count from.
  std::vector<double> last_backward_end_s;
  std::vector<double> last_backward_ready_s;  // and when its collectives end
  // ZeRO 2 and 3: when each chunk's last reduce-scatter ends, and each device's data-parallel
  // lane after the passes.
  std::vector<double> last_scatter_end_s;
  std::vector<double> data_parallel_free_s;
  // Per device, the most stash and receive buffers it holds at once (frees first at a tie).
  std::vector<int64_t> peak_activation_bytes;
};

// Throws std::logic_error when a pass waits for an input that its order never produces.
PipelineTiming time_pipeline(const ComputeOrder& order, int32_t microbatches,
                             const PipelinePasses& passes);

}  // namespace pipetwin
