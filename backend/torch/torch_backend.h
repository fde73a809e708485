// The LibTorch ranks behind the real-backend seam (backend/common/real_backend.h): the
// model runs on CPU ranks that talk over c10d Gloo. Torch-free header.
#pragma once

#include <memory>

#include "backend/common/real_backend.h"

namespace pipetwin {

std::unique_ptr<RealBackend> make_torch_backend();

}  // namespace pipetwin
