// drive_real_run (backend/run/real_run_driver.h) over a recording backend: the reference
// mode, and the checks every run passes before a rank is spawned, each one line.
#include "backend/run/real_run_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

// What the driver asked of the backend, and what the backend is to say.
struct Script {
  std::string name = "torch";
  std::string unavailable;
  std::string unsupported;
  int32_t reference_iterations = -1;  // the iterations run_reference was asked to train
};

class ScriptedBackend final : public RealBackend {
 public:
  explicit ScriptedBackend(Script* script) : script_(script) {}
  std::string name() const override { return script_->name; }
  bool trains_model() const override { return script_->name == "torch"; }
  std::string unavailable() const override { return script_->unavailable; }
  std::string unsupported(const ResolvedScenario&, const Program&) const override {
    return script_->unsupported;
  }
  MeasuredRun run(const ResolvedScenario&, const Program&, const RankEnvironment&,
                  const RealRunOptions&) override {
    ADD_FAILURE() << "a rank ran in the test process";
    return {};
  }
  MeasuredRun run_freezing(const ResolvedScenario&, const RankEnvironment&,
                           const RealRunOptions&) override {
    ADD_FAILURE() << "a rank ran in the test process";
    return {};
  }
  MeasuredRun run_reference(const ResolvedScenario& trained, const RealRunOptions&) override {
    script_->reference_iterations = trained.training.iterations;
    MeasuredRun run;
    run.losses = {2.0, 1.0};
    return run;
  }
  Program memory_program(const Program& program, const MeasuredRun&) const override {
    return program;
  }
  bool calibrates_in_one_process() const override { return false; }
  RankStart rank_start() const override { return RankStart::kExec; }
  Calibration calibrate(const RankEnvironment&, const CalibrationRequest&) override { return {}; }

 private:
  Script* script_;
};

struct Recorder final : RealRunReporter {
  std::vector<double> reference_losses;
  int32_t reference_warmup = -1;
  void reference(const MeasuredRun& run, int32_t warmup) override {
    reference_losses = run.losses;
    reference_warmup = warmup;
  }
  void program_run(const RealBackend&, const RunPlan&, const RankEnvironment&,
                   const MeasuredRun&) override {
    ADD_FAILURE() << "reported a rank's run";
  }
  void training_run(const RealBackend&, const RankEnvironment&, const MeasuredRun&) override {
    ADD_FAILURE() << "reported a rank's run";
  }
  void repeated(const std::filesystem::path&, const RepeatSummary&) override {
    ADD_FAILURE() << "reported repetitions";
  }
};

Script cuda_script() {
  Script script;
  script.name = "cuda";
  return script;
}

class RealRunDriver : public ::testing::Test {
 protected:
  void SetUp() override { ::unsetenv("RANK"); }  // this process is the parent, not a rank

  BuiltBackends built() {
    BuiltBackends backends;
    backends.torch = [this] { return std::make_unique<ScriptedBackend>(&torch_); };
    backends.cuda = [this] { return std::make_unique<ScriptedBackend>(&cuda_); };
    return backends;
  }

  // The error drive_real_run throws for `request`, or "" when none.
  template <typename Error>
  std::string error_of(const RealRunRequest& request) {
    try {
      drive_real_run(request, built(), loaded_, setup_, {"pipetwin", "run"}, recorder_);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  LoadedScenario loaded_ = load_scenario("builtin:mlp-cpu-2rank", {});
  ResolvedScenario setup_ = resolve_scenario(loaded_);
  Script torch_;
  Script cuda_ = cuda_script();
  Recorder recorder_;
};

TEST_F(RealRunDriver, ReferenceTrainsTheWarmUpIterationsToo) {
  RealRunRequest request;
  request.reference = true;
  request.warmup = 2;
  drive_real_run(request, built(), loaded_, setup_, {}, recorder_);
  EXPECT_EQ(torch_.reference_iterations, setup_.training.iterations + 2);
  EXPECT_EQ(recorder_.reference_warmup, 2);
  EXPECT_EQ(recorder_.reference_losses, std::vector<double>({2.0, 1.0}));
}

TEST_F(RealRunDriver, GlooRunsTheTorchBackend) {
  RealRunRequest request;
  request.backend = "gloo";
  request.reference = true;
  drive_real_run(request, built(), loaded_, setup_, {}, recorder_);
  EXPECT_EQ(torch_.reference_iterations, setup_.training.iterations + 1);
  EXPECT_EQ(cuda_.reference_iterations, -1);
}

TEST_F(RealRunDriver, AFreezeLogNeedsAModel) {
  RealRunRequest request;
  request.backend = "cuda";
  request.freeze_log = "/nonexistent/log";
  request.warmup = 0;
  EXPECT_THAT(error_of<InputError>(request), HasSubstr("--freeze-log records a model's gradients"));
}

TEST_F(RealRunDriver, AnUnavailableBackendSaysWhyAndWhatRunsInstead) {
  cuda_.unavailable = "no CUDA device is visible";
  RealRunRequest request;
  request.backend = "cuda";
  EXPECT_EQ(error_of<RuntimeFailure>(request),
            "no CUDA device is visible; run on CPU ranks with --backend torch (the default)");
}

TEST_F(RealRunDriver, AnUnsupportedScenarioIsNamed) {
  torch_.unsupported = "no architecture to run";
  EXPECT_EQ(error_of<InputError>(RealRunRequest{}),
            loaded_.source_name + ": no architecture to run");
}

TEST_F(RealRunDriver, NprocMustMatchTheDevices) {
  RealRunRequest request;
  request.nproc = 3;
  EXPECT_THAT(error_of<InputError>(request), HasSubstr("--nproc 3: the schedule needs 2 ranks"));
}

TEST_F(RealRunDriver, AnExplicitWarmUpIsRefusedWithAFreezeLog) {
  RealRunRequest request;
  request.freeze_log = "/nonexistent/log";
  request.warmup = 1;
  request.warmup_given = true;
  EXPECT_THAT(error_of<InputError>(request), HasSubstr("--warmup 1: --freeze-log records"));
}

TEST(RealRunDriverArguments, TheRanksGetTheCanonicalBackendName) {
  EXPECT_EQ(with_backend_argument({"pipetwin", "run", "s", "--backend", "gloo"}, "torch"),
            std::vector<std::string>({"pipetwin", "run", "s", "--backend", "torch"}));
  EXPECT_EQ(with_backend_argument({"pipetwin", "run", "--backend=gloo"}, "torch"),
            std::vector<std::string>({"pipetwin", "run", "--backend=torch"}));
  EXPECT_EQ(with_backend_argument({"pipetwin", "run"}, "torch"),
            std::vector<std::string>({"pipetwin", "run"}));
}

}  // namespace
}  // namespace pipetwin
