#include "backend/run/built_backends.h"

#if PIPETWIN_HAS_TORCH
#include "backend/torch/torch_backend.h"
#endif
#if PIPETWIN_HAS_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

namespace pipetwin {

BuiltBackends built_backends() {
  BuiltBackends built;
#if PIPETWIN_HAS_TORCH
  built.torch = make_torch_backend;
#endif
#if PIPETWIN_HAS_CUDA
  built.cuda = make_cuda_backend;
#endif
  return built;
}

std::unique_ptr<RealBackend> make_built_backend(std::string_view name, std::ostream* notes) {
  return make_real_backend(name, built_backends(), notes);
}

}  // namespace pipetwin
