#include "sim/program/validate_program.h"

#include <algorithm>
#include <cmath>

#include "sim/program/dependency_walk.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

[[noreturn]] void reject(const std::string& message) {
  throw InputError("invalid program: " + message);
}

void check_structure(const Program& p) {
  const int32_t n = p.size();
  if (static_cast<int32_t>(p.lane_begin.size()) != p.num_devices * kLaneCount + 1 ||
      p.lane_begin.back() != n || static_cast<int32_t>(p.dep_begin.size()) != n + 1 ||
      static_cast<int32_t>(p.partner.size()) != n) {
    reject("inconsistent tables (lanes, dependencies or pairs do not match the instructions)");
  }
  for (int32_t i = 0; i < n; ++i) {
    const Instruction& instr = p.instructions[i];
    if (p.lane_index(i) < 0 || p.lane_begin[p.lane_index(i)] > i ||
        p.lane_begin[p.lane_index(i) + 1] <= i) {
      reject(p.describe(i) + " is stored outside its lane");
    }
    if (instr.range.lo < 0 || instr.range.hi > p.global_batch || instr.range.size() <= 0) {
      reject(p.describe(i) + " has sample range [" + std::to_string(instr.range.lo) + "," +
             std::to_string(instr.range.hi) + ") outside the minibatch of " +
             std::to_string(p.global_batch));
    }
    for (int32_t d : p.deps_of(i)) {
      if (d < 0 || d >= n || d == i) {
        reject(p.describe(i) + " depends on a non-existent instruction " + std::to_string(d));
      }
    }
  }
}

void check_transfers(const Program& p) {
  for (int32_t i = 0; i < p.size(); ++i) {
    const Instruction& a = p.instructions[i];
    const int32_t j = p.partner[i];
    if (!is_transfer(a.op)) {
      if (j >= 0) reject(p.describe(i) + " is not a transfer but is paired");
      continue;
    }
    if (j < 0 || j >= p.size()) {
      reject(p.describe(i) + " has no matching " + (is_send(a.op) ? "RECV" : "SEND"));
    }
    const Instruction& b = p.instructions[j];
    const bool kinds_match = partner_op(a.op) == b.op && a.op != b.op;
    if (p.partner[j] != i || !kinds_match) {
      reject(p.describe(i) + " is paired with " + p.describe(j) + ", which does not match it");
    }
    if (a.peer_device != b.device || b.peer_device != a.device || a.bytes != b.bytes ||
        a.iteration != b.iteration || !(a.range == b.range)) {
      reject(p.describe(i) + " and " + p.describe(j) +
             " disagree on devices, bytes, iteration or range");
    }
  }
}

void check_collectives(const Program& p) {
  if (static_cast<int32_t>(p.group.size()) != p.size() || p.group_begin.empty()) {
    reject("inconsistent tables (collective groups do not match the instructions)");
  }
  for (int32_t i = 0; i < p.size(); ++i) {
    const Instruction& instr = p.instructions[i];
    const bool collective = is_collective(instr.op);
    if (collective != (p.group[i] >= 0)) {
      reject(p.describe(i) + (collective ? " belongs to no collective group"
                                         : " is not a collective but belongs to a group"));
    }
    if (instr.data_parallel && !collective) {
      reject(p.describe(i) + " is on the data-parallel lane but is not a collective");
    }
    if (!(instr.lead_s >= 0 && std::isfinite(instr.lead_s)) || (!collective && instr.lead_s != 0)) {
      reject(p.describe(i) + " has a lead of " + std::to_string(instr.lead_s) +
             " s (only a collective may start early, by a finite, non-negative time)");
    }
  }
  for (int32_t g = 0; g < p.num_groups(); ++g) {
    const auto members = p.members_of_group(g);
    std::vector<int32_t> devices;
    for (int32_t m : members) {
      const Instruction& a = p.instructions[m];
      const Instruction& first = p.instructions[members.front()];
      if (p.group[m] != g || a.op != first.op || a.data_parallel != first.data_parallel ||
          p.model_stage_of(a.stage) != p.model_stage_of(first.stage) ||
          a.iteration != first.iteration || a.bytes != first.bytes) {
        reject(p.describe(m) + " does not match the other members of its collective, " +
               p.describe(members.front()));
      }
      devices.push_back(a.device);
    }
    std::sort(devices.begin(), devices.end());
    if (std::adjacent_find(devices.begin(), devices.end()) != devices.end()) {
      reject(p.describe(members.front()) + "'s collective has two members on one device");
    }
  }
}

void check_coverage(const Program& p) {
  // (iteration, model stage, op) -> instructions, in a flat table: one slot per FWD, BWD
  // (or BWD_INPUT) and BWD_WEIGHT group. The last is empty unless backwards are split.
  // DualPipe's two copies of a model stage cover the batch together.
  const auto slot = [&](int32_t iteration, int32_t stage, Op op) -> int64_t {
    const int kind = op == Op::kFwd ? 0 : op == Op::kBwdWeight ? 2 : 1;
    return (static_cast<int64_t>(iteration) * p.num_stages + stage) * 3 + kind;
  };
  std::vector<std::vector<int32_t>> groups(static_cast<size_t>(slot(p.iterations, 0, Op::kFwd)));
  for (int32_t i = 0; i < p.size(); ++i) {
    const Instruction& instr = p.instructions[i];
    if (!is_pass(instr.op)) continue;
    // The other GPUs of its stage, and of its sequence.
    if (instr.device % (p.tensor_parallel * p.context_parallel) != 0) continue;
    if (instr.iteration < 0 || instr.iteration >= p.iterations || instr.stage < 0 ||
        instr.stage >= p.num_stages) {
      reject(p.describe(i) + " names a stage or iteration outside the program");
    }
    groups[slot(instr.iteration, p.model_stage_of(instr.stage), instr.op)].push_back(i);
  }
  for (int32_t it = 0; it < p.iterations; ++it) {
    for (int32_t s = 0; s < p.num_stages; ++s) {
      if (p.model_stage_of(s) != s) continue;  // counted with the copy it mirrors
      for (Op op : {Op::kFwd, Op::kBwd, Op::kBwdWeight}) {
        std::vector<int32_t>& ids = groups[slot(it, s, op)];
        if (op == Op::kBwdWeight && ids.empty()) continue;
        std::sort(ids.begin(), ids.end(), [&](int32_t x, int32_t y) {
          return p.instructions[x].range.lo < p.instructions[y].range.lo;
        });
        int32_t covered = 0;
        for (int32_t i : ids) {
          const SampleRange r = p.instructions[i].range;
          if (r.lo != covered) {
            reject("stage " + std::to_string(s) + " iteration " + std::to_string(it) + ": " +
                   op_name(op) + " ranges " +
                   (r.lo < covered
                        ? "overlap at " + p.describe(i)
                        : "leave samples [" + std::to_string(covered) + "," + std::to_string(r.lo) +
                              ") uncovered before " + p.describe(i)));
          }
          covered = r.hi;
        }
        if (covered != p.global_batch) {
          reject("stage " + std::to_string(s) + " iteration " + std::to_string(it) + ": " +
                 op_name(op) + " ranges cover only samples [0," + std::to_string(covered) +
                 ") of " + std::to_string(p.global_batch));
        }
      }
    }
  }
}

void check_acyclic(const Program& p) {
  std::vector<double> start, end;
  const WalkResult walk = walk_in_dependency_order(
      p, [](int32_t, int32_t) { return 0.0; }, start, end);
  if (walk.executed == p.size()) return;
  const int32_t i = walk.blocked;
  if (p.partner[i] >= 0 && walk.executed < p.size()) {
    reject("deadlock: " + p.describe(i) + " waits for its partner " + p.describe(p.partner[i]) +
           ", which can never be reached (a cycle through lane " +
           "order, dependencies and rendezvous)");
  }
  reject("cycle: " + p.describe(i) + " can never start");
}

}  // namespace

void validate_program(const Program& program) {
  check_structure(program);
  check_transfers(program);
  check_collectives(program);
  check_coverage(program);
  check_acyclic(program);
}

void validate_program_graph(const Program& program) {
  check_structure(program);
  check_transfers(program);
  check_collectives(program);
  check_acyclic(program);
}

}  // namespace pipetwin
