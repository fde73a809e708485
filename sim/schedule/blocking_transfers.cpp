#include "sim/schedule/blocking_transfers.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "sim/program/dependency_edges.h"
#include "sim/program/dependency_walk.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using Edges = DependencyEdges;

// MIGRATE moves layers between phases, outside any pipeline's compute order: it stays
// on its lanes.
bool blocks_compute(Op op) {
  return is_transfer(op) && op != Op::kMigrate && op != Op::kMigrateRecv;
}

// Where each blocking transfer is issued on its device's compute lane: point k lies
// between compute ops k - 1 and k (positions in the lane); -1 for other instructions.
std::vector<int32_t> issue_points(const Program& p) {
  std::vector<int32_t> point(p.size(), -1);
  for (int32_t device = 0; device < p.num_devices; ++device) {
    const int32_t lane = device * kLaneCount + static_cast<int>(Lane::kCompute);
    const int32_t first = p.lane_begin[lane];
    const int32_t last = p.lane_begin[lane + 1];
    const auto on_this_compute_lane = [&](int32_t j) { return j >= first && j < last; };
    for (int32_t kind : {static_cast<int>(Lane::kSend), static_cast<int>(Lane::kRecv)}) {
      const int32_t l = device * kLaneCount + kind;
      for (int32_t i = p.lane_begin[l]; i < p.lane_begin[l + 1]; ++i) {
        const Op op = p.instructions[i].op;
        if (!blocks_compute(op)) continue;
        if (is_send(op)) {  // right after its producer (the lane's start when none)
          int32_t producer = first - 1;
          for (int32_t d : p.deps_of(i)) {
            if (on_this_compute_lane(d)) producer = std::max(producer, d);
          }
          point[i] = producer + 1 - first;
        } else {  // right before its consumer (the lane's end when none)
          int32_t consumer = last;
          for (int32_t d : p.dependents_of(i)) {
            if (on_this_compute_lane(d)) consumer = std::min(consumer, d);
          }
          point[i] = consumer - first;
        }
      }
    }
  }
  return point;
}

// Blocking transfers are issued in compute-lane order, so each send and recv lane must
// hold them in the order of their issue points: a lane that ran a later-issued transfer
// first would wait on compute that waits on the earlier one. Lowering already orders
// them so; PipeFB posts stash receives ahead of gradient receives and is reordered here
// (stably, so transfers at one point keep their order).
void order_lanes_by_issue_point(Program& p, std::vector<int32_t>& point) {
  const int32_t n = p.size();
  std::vector<int32_t> old_at(n);  // old id of the instruction at each new position
  std::iota(old_at.begin(), old_at.end(), 0);
  bool moved = false;
  for (int32_t l = 0; l + 1 < static_cast<int32_t>(p.lane_begin.size()); ++l) {
    const auto first = old_at.begin() + p.lane_begin[l];
    const auto last = old_at.begin() + p.lane_begin[l + 1];
    if (std::any_of(first, last, [&](int32_t i) { return point[i] < 0; })) continue;
    std::stable_sort(first, last, [&](int32_t a, int32_t b) { return point[a] < point[b]; });
    moved |= !std::is_sorted(p.lane_begin[l] + point.begin(), p.lane_begin[l + 1] + point.begin());
  }
  if (!moved) return;
  std::vector<int32_t> new_id(n);
  for (int32_t k = 0; k < n; ++k) new_id[old_at[k]] = k;
  Edges edges;
  edges.reserve(p.deps.size());
  for (int32_t k = 0; k < n; ++k) {
    for (int32_t d : p.deps_of(old_at[k])) edges.emplace_back(k, new_id[d]);
  }
  std::vector<Instruction> instructions(n);
  std::vector<int32_t> partner(n, -1), group(n, -1), points(n);
  for (int32_t k = 0; k < n; ++k) {
    const int32_t i = old_at[k];
    instructions[k] = p.instructions[i];
    if (p.partner[i] >= 0) partner[k] = new_id[p.partner[i]];
    group[k] = p.group[i];
    points[k] = point[i];
  }
  for (int32_t& m : p.group_members) m = new_id[m];
  p.instructions = std::move(instructions);
  p.partner = std::move(partner);
  p.group = std::move(group);
  point = std::move(points);
  set_dependencies(p, edges);
}

bool deadlock_free(const Program& p) {
  std::vector<double> start, end;
  return walk_in_dependency_order(
             p, [](int32_t, int32_t) { return 0.0; }, start, end)
             .executed == p.size();
}

}  // namespace

void block_compute_on_transfers(Program& program) {
  std::vector<int32_t> point = issue_points(program);
  order_lanes_by_issue_point(program, point);
  const Edges original = dependency_edges(program);
  int32_t longest = 0;  // compute ops on the busiest device
  for (int32_t device = 0; device < program.num_devices; ++device) {
    const int32_t lane = device * kLaneCount + static_cast<int>(Lane::kCompute);
    longest = std::max(longest, program.lane_begin[lane + 1] - program.lane_begin[lane]);
  }
  for (int32_t ahead = 0; ahead <= longest; ++ahead) {
    Edges extra;
    for (int32_t i = 0; i < program.size(); ++i) {
      if (point[i] < 0) continue;
      const int32_t device = program.instructions[i].device;
      const int32_t lane = device * kLaneCount + static_cast<int>(Lane::kCompute);
      const int32_t first = program.lane_begin[lane];
      const int32_t ops = program.lane_begin[lane + 1] - first;
      if (is_send(program.instructions[i].op)) {
        // The compute op after the issue point waits for the send.
        if (point[i] < ops) extra.emplace_back(first + point[i], i);
      } else {
        // The receive waits for the compute op before the issue point (its consumer waits
        // for it already); posted `ahead` ops earlier when that is needed.
        const int32_t before = point[i] - 1 - ahead;
        if (before >= 0) extra.emplace_back(i, first + before);
      }
    }
    // Appended after each row's own dependencies, without duplicates: the LibTorch
    // backend reads a SEND's producer as its last dependency (and SENDs gain none).
    std::sort(extra.begin(), extra.end());
    extra.erase(std::unique(extra.begin(), extra.end()), extra.end());
    Edges edges;
    edges.reserve(original.size() + extra.size());
    size_t k = 0, e = 0;
    for (int32_t i = 0; i < program.size(); ++i) {
      const size_t row = edges.size();
      for (; k < original.size() && original[k].first == i; ++k) edges.push_back(original[k]);
      for (; e < extra.size() && extra[e].first == i; ++e) {
        if (std::find(edges.begin() + row, edges.end(), extra[e]) == edges.end()) {
          edges.push_back(extra[e]);
        }
      }
    }
    Program blocked = program;
    set_dependencies(blocked, edges);
    if (deadlock_free(blocked)) {
      program = std::move(blocked);
      return;
    }
  }
  throw InputError(
      "schedule.comm_overlap: false: this schedule deadlocks with blocking transfers, "
      "however early its receives are posted");
}

}  // namespace pipetwin
