// The real backends this binary was built with, by name: the factory behind `run
// --backend` and `calibrate --backend`.
#pragma once

#include <memory>
#include <ostream>
#include <string_view>

#include "backend/common/real_backend.h"

namespace pipetwin {

// What make_real_backend chooses from: LibTorch ranks where LibTorch was found, the CUDA
// replay where nvcc and NCCL were.
BuiltBackends built_backends();

// make_real_backend over built_backends(): "torch" or "cuda" ("gloo" meaning torch, with a
// note on `notes`); one line (RuntimeFailure) for a backend this binary lacks.
std::unique_ptr<RealBackend> make_built_backend(std::string_view name, std::ostream* notes);

}  // namespace pipetwin
