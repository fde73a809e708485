// What the expansions of a Program onto several GPUs per device share (tensor and context
// parallelism): device d becomes devices d * k + j, j < k, each running a copy of d's lanes;
// a transfer pairs GPU j with GPU j of its peer. The expansion adds the collective lanes
// (its own collectives among the k GPUs, and the Program's) and the dependencies itself.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/program/program.h"

namespace pipetwin {

class DeviceCopies {
 public:
  // Adds every instruction off the collective lanes, k times, lane by lane in order.
  DeviceCopies(const Program& program, int32_t k, ProgramBuilder& builder);

  int32_t copies() const { return k_; }
  // The builder id of copy j of instruction i (-1 until added).
  int32_t& at(int32_t i, int32_t j) { return id_[static_cast<size_t>(i) * k_ + j]; }
  // Instruction `ins` as it runs on copy j of its device.
  Instruction place(Instruction ins, int32_t j) const {
    ins.device = ins.device * k_ + j;
    if (ins.peer_device >= 0) ins.peer_device = ins.peer_device * k_ + j;
    return ins;
  }
  // The expanded Program: every GPU keeps its device's resident bytes, and each stage starts
  // on copy 0 of its device.
  Program finish(ProgramBuilder builder) const;

 private:
  const Program& program_;
  int32_t k_;
  std::vector<int32_t> id_;  // (i, j) -> builder id
};

}  // namespace pipetwin
