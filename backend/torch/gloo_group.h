// Joining the job: the c10d TCPStore rendezvous on MASTER_ADDR:MASTER_PORT and a Gloo
// process group over it, with errors that name the rank and the address; and the smaller
// groups that collectives such as a stage's ALLREDUCE across replicas run in.
#pragma once

#include <string>
#include <vector>

#include "backend/torch/real_run.h"
#include "backend/torch/torch_pch.h"

namespace pipetwin {

struct GlooJob {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> world;
};

GlooJob join_job(const RankEnvironment& env, double timeout_s);

// The world group only.
c10::intrusive_ptr<c10d::ProcessGroupGloo> connect(const RankEnvironment& env, double timeout_s);

// A group of `ranks` (world ranks, this one among them), named `purpose` in the store.
// Every member must create it, and members must create their groups in the same order.
c10::intrusive_ptr<c10d::ProcessGroupGloo> join_group(const GlooJob& job,
                                                      const RankEnvironment& env,
                                                      const std::vector<int>& ranks,
                                                      double timeout_s,
                                                      const std::string& purpose = "group");

}  // namespace pipetwin
