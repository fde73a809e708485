// RealBackend on LibTorch ranks: the entry points of real_run.h and link_calibration.h.
#include "backend/torch/torch_backend.h"

#include "backend/torch/link_calibration.h"
#include "backend/torch/real_run.h"
#include "sim/driver/build_program.h"
#include "sim/schedule/weight_versions.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// What each forward of the scenario's asynchronous Program runs with, for the reference.
StaleWeights stale_weights(const ResolvedScenario& setup) {
  const Program program = build_program(setup);
  const WeightVersions versions = weight_versions(program);
  StaleWeights stale;
  stale.stage_layers = chunk_layer_ranges(setup);
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& ins = program.instructions[i];
    if (ins.op != Op::kFwd) continue;
    stale.version[{ins.stage, ins.iteration, ins.microbatch}] = versions.forward_version[i];
  }
  stale.update_every_microbatch = setup.schedule.kind == proto::PIPEDREAM_ASYNC;
  return stale;
}

MeasuredLink measured(const LinkCalibration& link) {
  return {{link.latency_s, link.bandwidth_bytes_per_s}, link.samples};
}

class TorchBackend final : public RealBackend {
 public:
  std::string name() const override { return "torch"; }
  bool trains_model() const override { return true; }
  std::string unavailable() const override { return ""; }
  std::string unsupported(const ResolvedScenario& setup, const Program& program) const override {
    return real_run_unsupported(setup, program);
  }
  MeasuredRun run(const ResolvedScenario& setup, const Program& program, const RankEnvironment& env,
                  const RealRunOptions& options) override {
    return run_as_rank(setup, program, env, options);
  }
  MeasuredRun run_freezing(const ResolvedScenario& setup, const RankEnvironment& env,
                           const RealRunOptions& options) override {
    return run_freezing_as_rank(setup, env, options);
  }
  MeasuredRun run_reference(const ResolvedScenario& trained,
                            const RealRunOptions& options) override {
    if (is_asynchronous(trained.schedule.kind)) {
      return run_stale_reference(trained, options, stale_weights(trained));
    }
    std::vector<FreezeEvent> freezes;
    for (const auto& [iteration, frozen] : trained.freeze.at)
      freezes.push_back({iteration, frozen});
    return pipetwin::run_reference(trained, options, freezes);
  }
  // Activation memory as measured (the tensors each forward's layers produced).
  Program memory_program(const Program& program, const MeasuredRun& run) const override {
    return with_measured_stash(program, run);
  }
  bool calibrates_in_one_process() const override { return false; }
  // The launcher has run no tensor operation, so no intra-op pool exists yet to be lost.
  RankStart rank_start() const override { return RankStart::kFork; }
  Calibration calibrate(const RankEnvironment& env, const CalibrationRequest& request) override {
    const LinkCalibrations links =
        calibrate_link(env, request.sizes, request.repeats, request.timeout_s);
    Calibration calibration;
    calibration.intra_node_alone = measured(links.alone);
    calibration.intra_node = measured(links.under_load);
    return calibration;
  }
};

}  // namespace

std::unique_ptr<RealBackend> make_torch_backend() { return std::make_unique<TorchBackend>(); }

}  // namespace pipetwin
