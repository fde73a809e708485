// The CUDA replay behind the real-backend seam (backend/common/real_backend.h): the
// Program's ops as kernels, copies and NCCL calls on GPUs, compute sized to the cost
// model. Plain C++ header.
#pragma once

#include <memory>

#include "backend/common/real_backend.h"

namespace pipetwin {

std::unique_ptr<RealBackend> make_cuda_backend();

}  // namespace pipetwin
