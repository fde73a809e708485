#include "backend/replay/replay_plan.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <set>
#include <stdexcept>

namespace pipetwin {

const char* replay_kind_name(ReplayKind kind) {
  switch (kind) {
    case ReplayKind::kGemm:
      return "gemm";
    case ReplayKind::kSpin:
      return "spin";
    case ReplayKind::kSend:
      return "nccl_send";
    case ReplayKind::kRecv:
      return "nccl_recv";
    case ReplayKind::kToHost:
      return "memcpy_d2h";
    case ReplayKind::kToDevice:
      return "memcpy_h2d";
    case ReplayKind::kAllReduce:
      return "nccl_all_reduce";
    case ReplayKind::kAllToAll:
      return "nccl_all_to_all";
    case ReplayKind::kReduceScatter:
      return "nccl_reduce_scatter";
    case ReplayKind::kAllGather:
      return "nccl_all_gather";
  }
  return "?";
}

namespace {

ReplayKind replay_collective(Op op) {
  switch (op) {
    case Op::kAllToAll:
      return ReplayKind::kAllToAll;
    case Op::kReduceScatter:
      return ReplayKind::kReduceScatter;
    case Op::kAllGather:
      return ReplayKind::kAllGather;
    default:
      return ReplayKind::kAllReduce;
  }
}

}  // namespace

GemmShape gemm_for_flops(double flops, int64_t max_side) {
  GemmShape shape;
  if (flops <= 0) {
    shape.m = shape.n = shape.k = 0;
    return shape;
  }
  // Every dimension a multiple of 8: BF16 rows then start on 16-byte boundaries, which
  // Hopper's fast GEMM kernels need (measured on an H100: k = 7779 ran at 143 TFLOP/s,
  // k = 7832 at 750). Square output, as large as the FLOPs allow with k >= the side (a
  // GEMM that shape runs near peak); k carries the rest, up to the side, then repeats do.
  static constexpr int64_t kAlign = 8;
  auto aligned = [](double x) {
    return std::max<int64_t>(kAlign, std::llround(x / kAlign) * kAlign);
  };
  const int64_t side =
      std::clamp<int64_t>(static_cast<int64_t>(std::cbrt(flops / 2) / kAlign) * kAlign, kAlign,
                          max_side / kAlign * kAlign);
  const double per_k = 2.0 * side * side;
  shape.m = shape.n = side;
  shape.repeats = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(flops / (per_k * side))));
  shape.k = aligned(flops / (per_k * shape.repeats));
  return shape;
}

ReplayPlan make_replay_plan(const Program& p, int32_t rank, const ReplaySizing& sizing) {
  ReplayPlan plan;
  plan.rank = rank;
  plan.program_size = p.size();
  if (rank < static_cast<int32_t>(p.static_bytes.size()))
    plan.resident_bytes = p.static_bytes[rank];
  std::set<std::pair<int32_t, int32_t>> pairs;
  std::set<std::pair<int, std::vector<int32_t>>> groups;
  for (int32_t i = 0; i < p.size(); ++i) {
    const Instruction& ins = p.instructions[i];
    if (is_send(ins.op)) pairs.insert({ins.device, ins.peer_device});
    if (is_collective(ins.op)) {
      std::vector<int32_t> members;
      for (int32_t m : p.members_of_group(p.group[i])) members.push_back(p.instructions[m].device);
      std::sort(members.begin(), members.end());
      groups.insert({static_cast<int>(ins.lane()), members});
    }
  }
  plan.transfer_pairs.assign(pairs.begin(), pairs.end());
  plan.groups.assign(groups.begin(), groups.end());
  for (int lane = 0; lane < kLaneCount; ++lane) {
    const int l = rank * kLaneCount + lane;
    for (int32_t i = p.lane_begin[l]; i < p.lane_begin[l + 1]; ++i) {
      const Instruction& ins = p.instructions[i];
      ReplayOp op;
      op.instruction = i;
      op.text = p.text(i);
      op.stage = ins.stage;
      op.iteration = ins.iteration;
      op.microbatch = ins.microbatch;
      op.lane = static_cast<int>(ins.lane());
      op.bytes = ins.bytes;
      if (ins.lane() == Lane::kCompute) {
        if (sizing.flop_counted) {
          op.kind = ReplayKind::kGemm;
          const GemmShape shape =
              gemm_for_flops(ins.compute_s * sizing.device_flops, sizing.max_gemm_side);
          op.m = shape.m;
          op.n = shape.n;
          op.k = shape.k;
          op.repeats = shape.repeats;
        } else {
          op.kind = ReplayKind::kSpin;
          op.seconds = ins.compute_s;
        }
        if (ins.op == Op::kFwd) op.allocate_bytes = ins.stash_bytes;
        if (ins.op == Op::kBwd) op.free_bytes = ins.stash_bytes;
        // The ledger frees whole stashes: a split backward's is held until its W ends
        // (any positive count frees the stage's oldest stash; W's run in FWD order).
        if (ins.op == Op::kBwdWeight) op.free_bytes = std::max<int64_t>(ins.stash_bytes, 1);
      } else if (is_send(ins.op)) {
        op.kind = ReplayKind::kSend;
        op.peer = ins.peer_device;
      } else if (is_recv(ins.op)) {
        op.kind = ReplayKind::kRecv;
        op.peer = ins.peer_device;
      } else if (is_copy(ins.op)) {
        op.kind = copies_to_host(ins.op) ? ReplayKind::kToHost : ReplayKind::kToDevice;
        op.weights = ins.op == Op::kOffloadWeights || ins.op == Op::kReloadWeights;
      } else if (is_collective(ins.op)) {
        op.kind = replay_collective(ins.op);
        for (int32_t member : p.members_of_group(p.group[i])) {
          op.group.push_back(p.instructions[member].device);
        }
        std::sort(op.group.begin(), op.group.end());
      }
      for (int32_t d : p.deps_of(i)) {
        const Instruction& dep = p.instructions[d];
        if (dep.device != rank) {
          throw std::invalid_argument(p.describe(i) + " depends on " + p.describe(d) +
                                      " of another device without a transfer");
        }
        if (dep.lane() != ins.lane()) op.wait_for.push_back(d);
      }
      plan.ops.push_back(std::move(op));
    }
  }
  return plan;
}

std::vector<size_t> host_enqueue_order(const ReplayPlan& plan) {
  std::vector<std::deque<size_t>> lanes(kReplayLanes);
  for (size_t k = 0; k < plan.ops.size(); ++k) lanes[plan.ops[k].lane].push_back(k);
  std::set<int32_t> enqueued;
  std::vector<size_t> order;
  while (order.size() < plan.ops.size()) {
    const size_t before = order.size();
    for (auto& lane : lanes) {
      while (!lane.empty()) {
        const ReplayOp& op = plan.ops[lane.front()];
        const bool ready = std::all_of(op.wait_for.begin(), op.wait_for.end(),
                                       [&](int32_t d) { return enqueued.count(d) > 0; });
        if (!ready) break;
        order.push_back(lane.front());
        enqueued.insert(op.instruction);
        lane.pop_front();
      }
    }
    if (order.size() == before) {
      throw std::runtime_error("the replay plan's lanes wait for each other in a circle");
    }
  }
  return order;
}

LaneSchedule lane_schedule(const ReplayPlan& plan) {
  LaneSchedule schedule;
  schedule.program_size = plan.program_size;
  schedule.lanes.resize(kReplayLanes);
  schedule.waits.resize(plan.program_size);
  for (const ReplayOp& op : plan.ops) {
    schedule.lanes[op.lane].push_back(op.instruction);
    schedule.waits[op.instruction] = op.wait_for;
  }
  return schedule;
}

}  // namespace pipetwin
