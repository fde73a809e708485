// Joining the job: the c10d TCPStore rendezvous on MASTER_ADDR:MASTER_PORT and a Gloo
// process group over it, with errors that name the rank and the address.
#pragma once

#include "backend/torch/real_run.h"
#include "backend/torch/torch_pch.h"

namespace pipetwin {

c10::intrusive_ptr<c10d::ProcessGroupGloo> connect(const RankEnvironment& env, double timeout_s);

}  // namespace pipetwin
