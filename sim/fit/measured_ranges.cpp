#include "sim/fit/measured_ranges.h"

#include "sim/driver/build_program.h"
#include "sim/program/instruction.h"

namespace pipetwin {
namespace {

// The direction whose cut a per-microbatch op follows: forwards and the activations they
// send, or backwards and their gradients; or the whole replica's slice, which the
// Program's collectives and optimizer steps carry.
enum class Cut { kNone, kForward, kBackward, kReplica };

Cut cut_of(const std::string& op) {
  if (op == op_name(Op::kOptim) || op == op_name(Op::kAllreduce) ||
      op == op_name(Op::kReduceScatter) || op == op_name(Op::kAllGather)) {
    return Cut::kReplica;
  }
  if (op == op_name(Op::kFwd) || op == op_name(Op::kSendAct) || op == op_name(Op::kRecvAct)) {
    return Cut::kForward;
  }
  if (op == op_name(Op::kBwd) || op == op_name(Op::kSendGrad) || op == op_name(Op::kRecvGrad)) {
    return Cut::kBackward;
  }
  return Cut::kNone;
}

}  // namespace

int32_t assign_sample_ranges(const ResolvedScenario& setup, Timeline& timeline) {
  const PipelineLayout layout = make_layout(setup, place_layers(setup));
  const int32_t chunks = static_cast<int32_t>(layout.fwd_ranges.size());
  const int32_t replica_batch = layout.global_batch / layout.replicas;
  int32_t filled = 0;
  // A trace that knows no stages (a profiler's, one file per rank): each device's own, where
  // it runs one chunk.
  std::vector<int32_t> chunk_on(layout.devices_per_replica, -1);
  for (int32_t c = 0; c < chunks; ++c) {
    const int32_t d = layout.stage_device[c];
    if (d >= 0 && d < layout.devices_per_replica) chunk_on[d] = chunk_on[d] == -1 ? c : -2;
  }
  for (Span& span : timeline.spans) {
    if (span.range_hi > span.range_lo) continue;
    const Cut cut = cut_of(span.op);
    if (cut == Cut::kNone) continue;
    if (span.stage < 0 && span.device >= 0 && span.device < layout.num_devices) {
      span.stage = chunk_on[span.device % layout.devices_per_replica];
    }
    if (span.stage < 0 || span.stage >= chunks) continue;
    if (cut == Cut::kReplica) {
      const int32_t replica = span.device / layout.devices_per_replica;
      if (replica >= layout.replicas) continue;
      // As the Program numbers them: an update of the replica's whole batch belongs to no
      // microbatch, a collective over it to the first.
      span.microbatch = span.op == op_name(Op::kOptim) ? -1 : 0;
      span.range_lo = replica * replica_batch;
      span.range_hi = span.range_lo + replica_batch;
      ++filled;
      continue;
    }
    if (span.microbatch < 0) continue;
    const auto& ranges =
        cut == Cut::kForward ? layout.fwd_ranges[span.stage] : layout.bwd_ranges[span.stage];
    const int32_t count = static_cast<int32_t>(ranges.size());
    if (count == 0) continue;
    // Numbered across the replicas (r x count + m), or within the device's replica (m < count).
    const int32_t replica = span.device / layout.devices_per_replica;
    if (span.microbatch < count) span.microbatch += replica * count;
    if (span.microbatch / count != replica || replica >= layout.replicas) continue;
    const SampleRange local = ranges[span.microbatch % count];
    span.range_lo = local.lo + replica * replica_batch;
    span.range_hi = local.hi + replica * replica_batch;
    ++filled;
  }
  return filled;
}

}  // namespace pipetwin
