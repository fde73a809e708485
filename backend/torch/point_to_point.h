// A rank's point-to-point wire: Gloo send and recv on the world group, each pair tagged by
// its SEND's index, which both ranks compute from the same Program; and the bytes each
// SEND-kind instruction carried, as measured.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/torch/torch_pch.h"
#include "sim/program/program.h"

namespace pipetwin {

class PointToPoint {
 public:
  PointToPoint(const Program& program, c10d::ProcessGroupGloo& world)
      : p_(program), world_(world), payload_bytes_(program.size(), 0) {}

  // Transfer i's tensors to or from its peer, waiting until done. A pair may carry a
  // `second` message (a migration's optimizer step counts), tagged apart from the first.
  void send(int32_t i, std::vector<torch::Tensor>& payload, bool second = false) {
    world_.send(payload, p_.instructions[i].peer_device, tag(i, second))->wait();
  }
  void receive(int32_t i, std::vector<torch::Tensor>& buffer, bool second = false) {
    world_.recv(buffer, p_.instructions[i].peer_device, tag(i, second))->wait();
  }

  int64_t& payload_bytes(int32_t i) { return payload_bytes_[i]; }
  int64_t payload_bytes(int32_t i) const { return payload_bytes_[i]; }

 private:
  int tag(int32_t i, bool second) const {
    const int32_t send = is_send(p_.instructions[i].op) ? i : p_.partner[i];
    return second ? send + p_.size() : send;
  }

  const Program& p_;
  c10d::ProcessGroupGloo& world_;
  std::vector<int64_t> payload_bytes_;
};

}  // namespace pipetwin
