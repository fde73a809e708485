#include "backend/common/real_backend.h"

#include "sim/spec/errors.h"

namespace pipetwin {

std::string canonical_backend_name(std::string_view name, std::ostream* notes) {
  if (name == "torch" || name == "cuda") return std::string(name);
  if (name == "gloo") {
    if (notes != nullptr) {
      *notes << "note: --backend gloo means torch (LibTorch ranks, which talk over Gloo)\n";
    }
    return "torch";
  }
  throw InputError("--backend " + std::string(name) +
                   ": unknown backend (torch: LibTorch ranks on CPU; cuda: the Program replayed "
                   "on GPUs)");
}

std::unique_ptr<RealBackend> make_real_backend(std::string_view name, const BuiltBackends& built,
                                               std::ostream* notes) {
  const std::string canonical = canonical_backend_name(name, notes);
  if (canonical == "torch") {
    if (!built.torch) {
      throw RuntimeFailure(
          "this pipetwin was built without LibTorch, so it cannot run models on CPU ranks: "
          "install libtorch-dev (make deps) and rebuild; --backend cuda replays on GPUs "
          "without it");
    }
    return built.torch();
  }
  if (!built.cuda) {
    throw RuntimeFailure(
        "this pipetwin was built without CUDA (nvcc and NCCL not found); run on CPU ranks "
        "with --backend torch (the default)");
  }
  return built.cuda();
}

}  // namespace pipetwin
