// The real-backend factory (backend/common/real_backend.h): one vocabulary of backend
// names, the old `gloo` spelling accepted with a note, and one line for a backend that is
// unknown or not built into the binary.
#include "backend/common/real_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

// A backend that only says its name: what the factory returns is the maker's.
class NamedBackend final : public RealBackend {
 public:
  explicit NamedBackend(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  bool trains_model() const override { return name_ == "torch"; }
  std::string unavailable() const override { return ""; }
  std::string unsupported(const ResolvedScenario&, const Program&) const override { return ""; }
  MeasuredRun run(const ResolvedScenario&, const Program&, const RankEnvironment&,
                  const RealRunOptions&) override {
    return {};
  }
  MeasuredRun run_freezing(const ResolvedScenario&, const RankEnvironment&,
                           const RealRunOptions&) override {
    return {};
  }
  MeasuredRun run_reference(const ResolvedScenario&, const RealRunOptions&) override { return {}; }
  Program memory_program(const Program& program, const MeasuredRun&) const override {
    return program;
  }
  bool calibrates_in_one_process() const override { return false; }
  RankStart rank_start() const override { return RankStart::kExec; }
  Calibration calibrate(const RankEnvironment&, const CalibrationRequest&) override { return {}; }

 private:
  std::string name_;
};

BuiltBackends both() {
  BuiltBackends built;
  built.torch = [] { return std::make_unique<NamedBackend>("torch"); };
  built.cuda = [] { return std::make_unique<NamedBackend>("cuda"); };
  return built;
}

TEST(RealBackend, TorchAndCudaAreTheirOwnNamesWithoutANote) {
  for (const char* name : {"torch", "cuda"}) {
    std::ostringstream notes;
    EXPECT_EQ(canonical_backend_name(name, &notes), name);
    EXPECT_EQ(make_real_backend(name, both(), &notes)->name(), name);
    EXPECT_EQ(notes.str(), "");
  }
}

TEST(RealBackend, GlooMeansTorchWithOneNoteLine) {
  std::ostringstream notes;
  const std::unique_ptr<RealBackend> backend = make_real_backend("gloo", both(), &notes);
  EXPECT_EQ(backend->name(), "torch");
  EXPECT_EQ(notes.str(),
            "note: --backend gloo means torch (LibTorch ranks, which talk over Gloo)\n");
  // Without a stream to speak on (every rank but the one that reports), it is silent.
  EXPECT_EQ(canonical_backend_name("gloo", nullptr), "torch");
}

TEST(RealBackend, UnknownNameIsAnInputErrorNamingTheKnownOnes) {
  std::ostringstream notes;
  for (const char* name : {"nccl", "Torch", "", "gpu"}) {
    try {
      make_real_backend(name, both(), &notes);
      FAIL() << "accepted --backend " << name;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_THAT(what, HasSubstr(std::string("--backend ") + name + ": unknown backend"));
      EXPECT_THAT(what, HasSubstr("torch"));
      EXPECT_THAT(what, HasSubstr("cuda"));
      EXPECT_EQ(what.find('\n'), std::string::npos) << "one line";
    }
  }
  EXPECT_EQ(notes.str(), "");
}

TEST(RealBackend, BackendNotBuiltInIsOneRuntimeLine) {
  BuiltBackends torch_only = both();
  torch_only.cuda = nullptr;
  EXPECT_EQ(make_real_backend("torch", torch_only, nullptr)->name(), "torch");
  try {
    make_real_backend("cuda", torch_only, nullptr);
    FAIL() << "made a backend that was not built";
  } catch (const RuntimeFailure& e) {
    EXPECT_THAT(e.what(), HasSubstr("built without CUDA"));
    EXPECT_THAT(e.what(), HasSubstr("--backend torch"));
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
  BuiltBackends cuda_only = both();
  cuda_only.torch = nullptr;
  std::ostringstream notes;
  // The alias resolves before the build is asked: the note, then the one line.
  EXPECT_THROW(make_real_backend("gloo", cuda_only, &notes), RuntimeFailure);
  EXPECT_THAT(notes.str(), HasSubstr("means torch"));
  try {
    make_real_backend("torch", cuda_only, nullptr);
  } catch (const RuntimeFailure& e) {
    EXPECT_THAT(e.what(), HasSubstr("built without LibTorch"));
  }
}

}  // namespace
}  // namespace pipetwin
