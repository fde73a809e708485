// Overlapped gradient buckets (training.grad_bucket_mb), as PyTorch DDP (bucket_cap_mb),
// FSDP and Megatron-LM (overlap_grad_reduce) run them: a backward produces its weight
// gradients last layer first, and each bucket of gradients is reduced as soon as it is full,
// under the rest of the backward.
//
// The pass takes every gradient reduction of the Program (a data-parallel ALLREDUCE or
// REDUCE_SCATTER that waits for a backward on its own device) and splits it into buckets of at most
// `bucket_bytes`. The backward fills them at a steady rate, so bucket j of k, with B bytes
// each and the last one holding what remains of the G bytes, is ready when the backward has
// (G - (j+1) B) / G of its time left: its lead (Instruction::lead_s).
//
// Bucket j ends at max over i <= j of (ready_i + the time of buckets i..j) on the
// data-parallel lane, which runs them one after another. Up to bucket k-2, ready_i and the buckets'
// times are linear in i, so that maximum is at i = 0 or i = k-2: three collectives stand for the k
// buckets exactly, however many there are:
//   buckets 0 .. k-3  one collective of `collectives` k-2, with bucket 0's lead;
//   bucket k-2        with its own lead;
//   bucket k-1        at the backward's end.
// Only the end of the last is exact in each engine's terms; in between, the first piece holds
// its links for the span of its buckets.
//
// The pieces keep the reduction's place on the data-parallel lane (Lane::kDataParallel), so
// they run beside the collectives the backward itself needs (tensor-parallel all-reduces,
// expert all-to-alls), as the buckets run on a stream and communicator of their own in the
// frameworks. Where they cross the same network links at once, SimGrid shares the links
// between them; the analytic engine times every collective alone, as it times transfers.
// Runs after sharded data parallelism and before the tensor-parallel expansion.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/program/program.h"
#include "sim/schedule/lowering.h"

namespace pipetwin {

// One collective standing for `buckets` consecutive buckets of `bytes` in all, which may
// start when the backward has `lead_share` of its time left.
struct BucketPiece {
  int64_t bytes = 0;
  int32_t buckets = 1;
  double lead_share = 0;
};

// The pieces of a reduction of `bytes` in buckets of `bucket_bytes` (one piece, no lead, when
// bucket_bytes is 0 or the gradients fit one bucket).
std::vector<BucketPiece> bucket_pieces(int64_t bytes, int64_t bucket_bytes);

// The bucket of a stage's gradient reduction: `bucket_bytes`, and for ZeRO's reduce-scatters
// no finer than a layer's gradients of the stage: FSDP reduces one wrapped block at a time,
// and DeepSpeed's default bucket (500M elements) is coarser still.
int64_t reduction_bucket_bytes(const StageCost& cost, bool reduce_scatter, int64_t bucket_bytes);

Program bucket_gradients(const Program& program, const PipelineLayout& layout,
                         int64_t bucket_bytes);

}  // namespace pipetwin
