// RealBackend on GPUs: the replay of backend/replay/replay_run.h and the measurements of
// cuda_calibration.h. No model: nothing trains, so memory is as the Program accounts it.
#include "backend/cuda/cuda_backend.h"

#include "backend/cuda/cuda_calibration.h"
#include "backend/replay/replay_run.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

MeasuredLink measured_link(const LinkFit& fit,
                           const std::vector<std::pair<double, double>>& samples) {
  return {fit, samples};
}

class CudaBackend final : public RealBackend {
 public:
  std::string name() const override { return "cuda"; }
  bool trains_model() const override { return false; }
  std::string unavailable() const override { return cuda_unavailable(); }
  // What a backend without a model cannot do (measure gradients, record them) the run
  // driver refuses for every such backend, naming the field.
  std::string unsupported(const ResolvedScenario&, const Program&) const override { return ""; }
  MeasuredRun run(const ResolvedScenario& setup, const Program& program, const RankEnvironment& env,
                  const RealRunOptions&) override {
    return replay_as_rank(setup, program, env);
  }
  MeasuredRun run_freezing(const ResolvedScenario& setup, const RankEnvironment& env,
                           const RealRunOptions& options) override {
    return replay_freezing_as_rank(setup, env, options.iterations_per_phase);
  }
  MeasuredRun run_reference(const ResolvedScenario&, const RealRunOptions&) override {
    throw InputError(
        "--reference trains the model: the CUDA replay has none (use --backend torch)");
  }
  Program memory_program(const Program& program, const MeasuredRun&) const override {
    return program;
  }
  bool calibrates_in_one_process() const override { return true; }
  // A CUDA context does not survive a fork: each rank starts its runtime afresh.
  RankStart rank_start() const override { return RankStart::kExec; }
  // One process drives the GPUs: copies on GPU 0, NCCL between GPUs 0 and 1.
  Calibration calibrate(const RankEnvironment&, const CalibrationRequest& request) override {
    CudaCalibration cuda;
    try {
      cuda = calibrate_cuda(request.sizes, request.repeats);
    } catch (const std::exception& e) {
      throw RuntimeFailure(std::string("CUDA calibration failed: ") + e.what());
    }
    Calibration calibration;
    calibration.device_name = cuda.device_name;
    calibration.device_count = cuda.device_count;
    calibration.host_to_device = measured_link(cuda.h2d, cuda.h2d_samples);
    calibration.device_to_host = measured_link(cuda.d2h, cuda.d2h_samples);
    if (cuda.nccl_p2p_measured) {
      calibration.intra_node = measured_link(cuda.nccl_p2p, cuda.nccl_p2p_samples);
    } else {
      calibration.intra_node_note = cuda.nccl_p2p_note;
    }
    calibration.gemm_bf16 = cuda.gemm_bf16;
    calibration.gemm_fp16 = cuda.gemm_fp16;
    calibration.gemm_fp32 = cuda.gemm_fp32;
    return calibration;
  }
};

}  // namespace

std::unique_ptr<RealBackend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace pipetwin
