#include "sim/program/program.h"

#include <algorithm>
#include <stdexcept>

#include "sim/program/csr.h"

namespace pipetwin {

std::string Program::text(int32_t i) const {
  return instruction_text(instructions[i], show_ranges);
}

std::string Program::describe(int32_t i) const {
  const Instruction& instr = instructions[i];
  return text(i) + " (gpu" + std::to_string(instr.device) + " " + lane_name(instr.lane()) +
         " lane, position " + std::to_string(i - lane_begin[lane_index(i)]) + ", iteration " +
         std::to_string(instr.iteration) + ")";
}

ProgramBuilder::ProgramBuilder(int32_t num_devices, int32_t num_stages, int32_t iterations,
                               int32_t global_batch) {
  program_.num_devices = num_devices;
  program_.num_stages = num_stages;
  program_.iterations = iterations;
  program_.global_batch = global_batch;
}

void ProgramBuilder::reserve(int64_t instructions, int64_t dependencies) {
  pending_.reserve(static_cast<size_t>(instructions));
  partner_.reserve(static_cast<size_t>(instructions));
  edges_.reserve(static_cast<size_t>(dependencies));
}

int32_t ProgramBuilder::add(const Instruction& instr) {
  if (instr.device < 0 || instr.device >= program_.num_devices) {
    throw std::invalid_argument("instruction on device " + std::to_string(instr.device) +
                                " outside the program's " + std::to_string(program_.num_devices) +
                                " devices");
  }
  pending_.push_back(instr);
  partner_.push_back(-1);
  return static_cast<int32_t>(pending_.size()) - 1;
}

void ProgramBuilder::add_dependency(int32_t instr, int32_t depends_on) {
  edges_.emplace_back(instr, depends_on);
}

void ProgramBuilder::pair(int32_t send, int32_t recv) {
  partner_[send] = recv;
  partner_[recv] = send;
}

void ProgramBuilder::group(const std::vector<int32_t>& members, GroupKind kind) {
  groups_.push_back(members);
  group_kinds_.push_back(kind);
}

Program ProgramBuilder::finish() && {
  Program& p = program_;
  const int32_t n = static_cast<int32_t>(pending_.size());
  const int32_t lanes = p.num_devices * kLaneCount;

  // Counting sort by lane keeps each lane's append order.
  auto lane_of_pending = [&](int32_t i) {
    return pending_[i].device * kLaneCount + static_cast<int>(pending_[i].lane());
  };
  p.lane_begin.assign(lanes + 1, 0);
  for (int32_t i = 0; i < n; ++i) ++p.lane_begin[lane_of_pending(i) + 1];
  for (int32_t l = 0; l < lanes; ++l) p.lane_begin[l + 1] += p.lane_begin[l];
  std::vector<int32_t> new_id(n);
  std::vector<int32_t> fill(p.lane_begin.begin(), p.lane_begin.end() - 1);
  for (int32_t i = 0; i < n; ++i) new_id[i] = fill[lane_of_pending(i)]++;

  p.instructions.resize(n);
  p.partner.assign(n, -1);
  for (int32_t i = 0; i < n; ++i) {
    p.instructions[new_id[i]] = pending_[i];
    if (partner_[i] >= 0) p.partner[new_id[i]] = new_id[partner_[i]];
  }

  p.group.assign(n, -1);
  p.group_begin.assign(1, 0);
  p.group_kind = std::move(group_kinds_);
  for (const auto& members : groups_) {
    for (int32_t m : members) {
      p.group[new_id[m]] = static_cast<int32_t>(p.group_begin.size()) - 1;
      p.group_members.push_back(new_id[m]);
    }
    p.group_begin.push_back(static_cast<int32_t>(p.group_members.size()));
  }

  std::vector<std::pair<int32_t, int32_t>> forward, reverse;
  forward.reserve(edges_.size());
  reverse.reserve(edges_.size());
  for (const auto& [instr, dep] : edges_) {
    forward.emplace_back(new_id[instr], new_id[dep]);
    reverse.emplace_back(new_id[dep], new_id[instr]);
  }
  build_csr(n, forward, p.dep_begin, p.deps);
  build_csr(n, reverse, p.dependent_begin, p.dependents);

  p.static_bytes = std::move(static_bytes_);
  p.static_bytes.resize(p.num_devices, 0);
  p.stage_device = std::move(stage_device_);
  p.stage_replicas = std::move(stage_replicas_);
  p.model_stage = std::move(model_stage_);
  p.show_ranges = show_ranges_;
  p.tensor_parallel = tensor_parallel_;
  p.context_parallel = context_parallel_;
  return std::move(program_);
}

}  // namespace pipetwin
