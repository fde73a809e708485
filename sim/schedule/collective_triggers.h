// What the passes that rebuild a Program around new collectives share (tensor, expert and
// sharded data parallelism): where they place them on a collective lane (each entry goes
// where the compute op that triggers it stands, so that every member of a group meets its
// collectives in one order), and the rebuilt Program's layout.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "sim/program/program.h"

namespace pipetwin {

// Each instruction's position on its device's compute lane (-1 off the compute lane).
std::vector<int32_t> compute_positions(const Program& program);

// For each collective, the latest compute position it waits for, through the collectives it
// waits for (a gradient all-reduce after the last backward's all-to-all is triggered by that
// backward); -1 for other instructions.
std::vector<int32_t> collective_triggers(const Program& program,
                                         const std::vector<int32_t>& position);

// One entry of a collective lane being rebuilt: a collective the Program had, or a new one
// for compute op `index`, ordered by the compute position that triggers it. At a tie the new
// one comes first: a backward's own collective precedes the gradient all-reduce that waits
// for that backward. Only an existing collective that starts under that compute op and
// gates what follows it (context parallelism's ring, Instruction::lead_s) comes before: it is
// ready before the op ends. Gradient buckets, which only the update waits for, do not: they
// would delay the collectives on the critical path.
struct CollectiveLaneEntry {
  int32_t position = 0;
  bool existing = false;
  int32_t index = 0;  // the existing collective, or the compute op
  bool early = false;
  bool operator<(const CollectiveLaneEntry& o) const {
    return std::tuple(position, !early, existing, index) <
           std::tuple(o.position, !o.early, o.existing, o.index);
  }
};

// Whether only updates wait for collective i, directly or through other collectives (a
// gradient reduction), rather than a pass or a transfer.
inline bool feeds_only_updates(const Program& program, int32_t i) {
  for (int32_t d : program.dependents_of(i)) {
    const Instruction& next = program.instructions[d];
    const bool update =
        next.op == Op::kOptim || (is_collective(next.op) && feeds_only_updates(program, d));
    if (!update) return false;
  }
  return true;
}

// The entry of the Program's collective i, triggered at compute position `trigger`.
inline CollectiveLaneEntry existing_entry(const Program& program, int32_t i, int32_t trigger) {
  return {trigger, true, i,
          program.instructions[i].starts_under_compute() && !feeds_only_updates(program, i)};
}

// Whether instruction i waits for pass d itself rather than for the collectives that follow
// d (its all-reduce or all-to-all): a collective that starts under d, or one over the
// data-parallel replicas, which reduces the weight gradients d computed (or gathers weights)
// and not d's output that the pass's own collectives complete.
inline bool waits_for_the_pass_itself(const Program& program, int32_t i) {
  const Instruction& ins = program.instructions[i];
  return ins.starts_under_compute() || ins.data_parallel;
}

// The rebuilt Program, with `source`'s resident bytes, stage placement, GPUs per stage and
// range display.
Program finish_like(const Program& source, ProgramBuilder builder);

}  // namespace pipetwin
